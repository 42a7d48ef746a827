"""Regression metrics: mean squared/absolute/percentage/log errors, RMSE,
cosine similarity, computed on host NumPy arrays.

The per-sample functions mirror the losses of the same name (mean over the
last axis) but never record a graph.
"""
import numpy

from minikeras.metrics.base import Mean, MeanMetricWrapper, squeeze_or_expand_to_same_rank, to_host

_EPSILON = 1e-7  # keras.backend.epsilon()


def _pair(name, y_true, y_pred):
    y_pred = to_host(y_pred, numpy.float64)
    y_true = to_host(y_true, numpy.float64)
    y_true, y_pred = squeeze_or_expand_to_same_rank(y_true, y_pred)
    if y_true.shape != y_pred.shape:
        raise ValueError(
            f"{name}: y_true and y_pred must have the same shape, received y_true shape {y_true.shape} "
            f"and y_pred shape {y_pred.shape}."
        )
    return y_true, y_pred


def _mean_last(values):
    return values.mean(axis=-1) if values.ndim else values


def mean_squared_error(y_true, y_pred):
    """``mean((y_true - y_pred) ** 2, axis=-1)`` on host arrays."""
    y_true, y_pred = _pair("mean_squared_error", y_true, y_pred)
    return _mean_last(numpy.square(y_true - y_pred))


def mean_absolute_error(y_true, y_pred):
    """``mean(|y_true - y_pred|, axis=-1)`` on host arrays."""
    y_true, y_pred = _pair("mean_absolute_error", y_true, y_pred)
    return _mean_last(numpy.abs(y_true - y_pred))


def mean_absolute_percentage_error(y_true, y_pred):
    """``100 * mean(|(y_true - y_pred) / max(|y_true|, eps)|, axis=-1)``."""
    y_true, y_pred = _pair("mean_absolute_percentage_error", y_true, y_pred)
    return 100.0 * _mean_last(numpy.abs((y_true - y_pred) / numpy.maximum(numpy.abs(y_true), _EPSILON)))


def mean_squared_logarithmic_error(y_true, y_pred):
    """``mean((log(max(y_pred, eps) + 1) - log(max(y_true, eps) + 1)) ** 2, axis=-1)``."""
    y_true, y_pred = _pair("mean_squared_logarithmic_error", y_true, y_pred)
    first = numpy.log(numpy.maximum(y_pred, _EPSILON) + 1.0)
    second = numpy.log(numpy.maximum(y_true, _EPSILON) + 1.0)
    return _mean_last(numpy.square(first - second))


def cosine_similarity(y_true, y_pred, axis=-1):
    """The cosine of the angle between ``y_true`` and ``y_pred`` along ``axis``
    (positive: 1 means same direction; the loss of this name is its negative)."""
    y_true, y_pred = _pair("cosine_similarity", y_true, y_pred)

    def l2_normalize(x):
        return x / numpy.sqrt(numpy.maximum(numpy.sum(x * x, axis=axis, keepdims=True), 1e-12))

    return numpy.sum(l2_normalize(y_true) * l2_normalize(y_pred), axis=axis)


class MeanSquaredError(MeanMetricWrapper):
    """The running mean of ``mean_squared_error``.

    Example:
        >>> MeanSquaredError()([[0, 1], [0, 0]], [[1, 1], [0, 0]])
        0.25
    """

    def __init__(self, name="mean_squared_error", dtype=None):
        super().__init__(mean_squared_error, name=name, dtype=dtype)

    def get_config(self):
        """Name and dtype."""
        return {"name": self.name, "dtype": self.dtype}


class MeanAbsoluteError(MeanMetricWrapper):
    """The running mean of ``mean_absolute_error``."""

    def __init__(self, name="mean_absolute_error", dtype=None):
        super().__init__(mean_absolute_error, name=name, dtype=dtype)

    def get_config(self):
        """Name and dtype."""
        return {"name": self.name, "dtype": self.dtype}


class MeanAbsolutePercentageError(MeanMetricWrapper):
    """The running mean of ``mean_absolute_percentage_error``."""

    def __init__(self, name="mean_absolute_percentage_error", dtype=None):
        super().__init__(mean_absolute_percentage_error, name=name, dtype=dtype)

    def get_config(self):
        """Name and dtype."""
        return {"name": self.name, "dtype": self.dtype}


class MeanSquaredLogarithmicError(MeanMetricWrapper):
    """The running mean of ``mean_squared_logarithmic_error``."""

    def __init__(self, name="mean_squared_logarithmic_error", dtype=None):
        super().__init__(mean_squared_logarithmic_error, name=name, dtype=dtype)

    def get_config(self):
        """Name and dtype."""
        return {"name": self.name, "dtype": self.dtype}


class CosineSimilarity(MeanMetricWrapper):
    """The running mean of the cosine similarity along ``axis``.

    Args:
        name: metric name.
        dtype: kept for Keras compatibility.
        axis: the axis the vectors lie along (default -1).
    """

    def __init__(self, name="cosine_similarity", dtype=None, axis=-1):
        super().__init__(cosine_similarity, name=name, dtype=dtype, axis=axis)
        self.axis = axis

    def get_config(self):
        """Name, dtype and axis."""
        return {"name": self.name, "dtype": self.dtype, "axis": self.axis}


class RootMeanSquaredError(Mean):
    """``sqrt`` of the running (weighted) mean of squared errors.

    Example:
        >>> RootMeanSquaredError()([[0, 1], [0, 0]], [[1, 1], [0, 0]])
        0.5
    """

    def __init__(self, name="root_mean_squared_error", dtype=None):
        super().__init__(name=name, dtype=dtype)

    def update_state(self, y_true, y_pred, sample_weight=None):
        """Add the squared errors of one batch."""
        y_true, y_pred = _pair(self.name, y_true, y_pred)
        super().update_state(numpy.square(y_pred - y_true), sample_weight=sample_weight)

    def result(self):
        """The root of the running mean squared error, a Python float."""
        return float(numpy.sqrt(super().result()))
