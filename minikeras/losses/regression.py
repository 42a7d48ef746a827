"""Regression losses: mean squared/absolute/percentage/log errors, Huber,
log-cosh and (negative) cosine similarity.

Each per-sample function reduces with the mean over the last axis, as Keras
does, and is built from differentiable ops.
"""
import math

from minikeras import ops
from minikeras.losses.loss import EPSILON, LossFunctionWrapper, checks_inputs, prepare
from minikeras._support.argument_validation import validate_number


@checks_inputs
def mean_squared_error(y_true, y_pred):
    """``mean(square(y_true - y_pred), axis=-1)``.

    Example:
        >>> mean_squared_error([[0.0, 1.0]], minikeras.tensor([[1.0, 1.0]])).numpy()
        array([0.5], dtype=float32)
    """
    y_true, y_pred = prepare("mean_squared_error", y_true, y_pred)
    return ops.mean(ops.square(y_pred - y_true), axis=-1)


@checks_inputs
def mean_absolute_error(y_true, y_pred):
    """``mean(abs(y_true - y_pred), axis=-1)``."""
    y_true, y_pred = prepare("mean_absolute_error", y_true, y_pred)
    return ops.mean(ops.abs(y_pred - y_true), axis=-1)


@checks_inputs
def mean_absolute_percentage_error(y_true, y_pred):
    """``100 * mean(abs((y_true - y_pred) / max(abs(y_true), 1e-7)), axis=-1)``."""
    y_true, y_pred = prepare("mean_absolute_percentage_error", y_true, y_pred)
    scale = ops.maximum(ops.abs(y_true), EPSILON)
    return ops.mean(ops.abs((y_true - y_pred) / scale), axis=-1) * 100.0


@checks_inputs
def mean_squared_logarithmic_error(y_true, y_pred):
    """``mean(square(log(max(y_pred, eps) + 1) - log(max(y_true, eps) + 1)), axis=-1)``."""
    y_true, y_pred = prepare("mean_squared_logarithmic_error", y_true, y_pred)
    first = ops.log1p(ops.maximum(y_pred, EPSILON))
    second = ops.log1p(ops.maximum(y_true, EPSILON))
    return ops.mean(ops.square(first - second), axis=-1)


@checks_inputs
def huber(y_true, y_pred, delta=1.0):
    """Huber loss: quadratic for errors up to ``delta``, linear beyond.

    ``0.5 * e**2`` where ``|e| <= delta``, ``delta * |e| - 0.5 * delta**2``
    elsewhere, averaged over the last axis. Written as
    ``0.5 * q**2 + delta * (|e| - q)`` with ``q = min(|e|, delta)``, which is
    the same function with one branch-free graph.

    Args:
        y_true: targets.
        y_pred: predictions.
        delta: where the loss turns linear (default 1.0).
    """
    y_true, y_pred = prepare("huber", y_true, y_pred)
    error = ops.abs(y_pred - y_true)
    quadratic = ops.minimum(error, float(delta))
    return ops.mean(ops.square(quadratic) * 0.5 + (error - quadratic) * float(delta), axis=-1)


@checks_inputs
def log_cosh(y_true, y_pred):
    """``mean(log(cosh(y_pred - y_true)), axis=-1)``, computed without overflow
    as ``|x| + log1p(exp(-2|x|)) - log(2)``."""
    y_true, y_pred = prepare("log_cosh", y_true, y_pred)
    error = ops.abs(y_pred - y_true)
    return ops.mean(error + ops.log1p(ops.exp(error * -2.0)) - math.log(2.0), axis=-1)


def _l2_normalize(x, axis):
    return x * ops.rsqrt(ops.maximum(ops.sum(ops.square(x), axis=axis, keepdims=True), 1e-12))


@checks_inputs
def cosine_similarity(y_true, y_pred, axis=-1):
    """Negative cosine similarity along ``axis`` (-1: same direction, 0:
    orthogonal or a zero vector), so that minimizing it aligns the vectors.

    Args:
        y_true: targets.
        y_pred: predictions.
        axis: the axis the vectors lie along (default -1).
    """
    y_true, y_pred = prepare("cosine_similarity", y_true, y_pred)
    return -ops.sum(_l2_normalize(y_true, axis) * _l2_normalize(y_pred, axis), axis=axis)


class MeanSquaredError(LossFunctionWrapper):
    """Mean of squared errors (``name="mean_squared_error"``)."""

    def __init__(self, reduction="sum_over_batch_size", name="mean_squared_error", dtype=None):
        super().__init__(mean_squared_error, reduction=reduction, name=name, dtype=dtype)

    def get_config(self):
        """Name and reduction."""
        return {"name": self.name, "reduction": self.reduction}


class MeanAbsoluteError(LossFunctionWrapper):
    """Mean of absolute errors (``name="mean_absolute_error"``)."""

    def __init__(self, reduction="sum_over_batch_size", name="mean_absolute_error", dtype=None):
        super().__init__(mean_absolute_error, reduction=reduction, name=name, dtype=dtype)

    def get_config(self):
        """Name and reduction."""
        return {"name": self.name, "reduction": self.reduction}


class MeanAbsolutePercentageError(LossFunctionWrapper):
    """Mean absolute percentage error (``name="mean_absolute_percentage_error"``)."""

    def __init__(self, reduction="sum_over_batch_size", name="mean_absolute_percentage_error", dtype=None):
        super().__init__(mean_absolute_percentage_error, reduction=reduction, name=name, dtype=dtype)

    def get_config(self):
        """Name and reduction."""
        return {"name": self.name, "reduction": self.reduction}


class MeanSquaredLogarithmicError(LossFunctionWrapper):
    """Mean squared logarithmic error (``name="mean_squared_logarithmic_error"``)."""

    def __init__(self, reduction="sum_over_batch_size", name="mean_squared_logarithmic_error", dtype=None):
        super().__init__(mean_squared_logarithmic_error, reduction=reduction, name=name, dtype=dtype)

    def get_config(self):
        """Name and reduction."""
        return {"name": self.name, "reduction": self.reduction}


class Huber(LossFunctionWrapper):
    """Huber loss (``name="huber_loss"``).

    Args:
        delta: where the loss turns from quadratic to linear (default 1.0).
        reduction: see ``Loss``.
        name: default ``"huber_loss"``.
        dtype: kept for Keras compatibility.
    """

    def __init__(self, delta=1.0, reduction="sum_over_batch_size", name="huber_loss", dtype=None):
        delta = validate_number(type(self).__name__, "delta", delta, minimum=0.0)
        super().__init__(huber, reduction=reduction, name=name, dtype=dtype, delta=delta)
        self.delta = delta

    def get_config(self):
        """Name, reduction and delta."""
        return {"name": self.name, "reduction": self.reduction, "delta": self.delta}


class LogCosh(LossFunctionWrapper):
    """Mean log-cosh of the errors (``name="log_cosh"``)."""

    def __init__(self, reduction="sum_over_batch_size", name="log_cosh", dtype=None):
        super().__init__(log_cosh, reduction=reduction, name=name, dtype=dtype)

    def get_config(self):
        """Name and reduction."""
        return {"name": self.name, "reduction": self.reduction}


class CosineSimilarity(LossFunctionWrapper):
    """Negative cosine similarity (``name="cosine_similarity"``).

    Args:
        axis: the axis the vectors lie along (default -1).
        reduction: see ``Loss``.
        name: default ``"cosine_similarity"``.
        dtype: kept for Keras compatibility.
    """

    def __init__(self, axis=-1, reduction="sum_over_batch_size", name="cosine_similarity", dtype=None):
        super().__init__(cosine_similarity, reduction=reduction, name=name, dtype=dtype, axis=axis)
        self.axis = axis

    def get_config(self):
        """Name, reduction and axis."""
        return {"name": self.name, "reduction": self.reduction, "axis": self.axis}
