"""Metrics that average a loss function: the cross-entropies, KL divergence,
Poisson and the hinge losses (``metrics=["binary_crossentropy"]``).

They evaluate the library's loss functions without recording a graph, so a
metric and the loss of the same name agree exactly.
"""
from minikeras import losses
from minikeras.metrics.base import MeanMetricWrapper


class _LossMetric(MeanMetricWrapper):
    """A MeanMetricWrapper whose config is its name, dtype and loss options."""

    def get_config(self):
        """Name, dtype and the loss function's keyword arguments."""
        return {"name": self.name, "dtype": self.dtype, **self._fn_kwargs}


class BinaryCrossentropy(_LossMetric):
    """The running mean of ``losses.binary_crossentropy``.

    Args:
        name: default ``"binary_crossentropy"``.
        dtype: kept for Keras compatibility.
        from_logits: whether ``y_pred`` holds logits.
        label_smoothing: in [0, 1].
    """

    def __init__(self, name="binary_crossentropy", dtype=None, from_logits=False, label_smoothing=0.0):
        super().__init__(losses.binary_crossentropy, name=name, dtype=dtype, from_logits=from_logits,
                         label_smoothing=label_smoothing)


class CategoricalCrossentropy(_LossMetric):
    """The running mean of ``losses.categorical_crossentropy``.

    Args:
        name: default ``"categorical_crossentropy"``.
        dtype: kept for Keras compatibility.
        from_logits: whether ``y_pred`` holds logits.
        label_smoothing: in [0, 1].
        axis: the class axis.
    """

    def __init__(self, name="categorical_crossentropy", dtype=None, from_logits=False, label_smoothing=0.0,
                 axis=-1):
        super().__init__(losses.categorical_crossentropy, name=name, dtype=dtype, from_logits=from_logits,
                         label_smoothing=label_smoothing, axis=axis)


class SparseCategoricalCrossentropy(_LossMetric):
    """The running mean of ``losses.sparse_categorical_crossentropy``.

    Args:
        name: default ``"sparse_categorical_crossentropy"``.
        dtype: kept for Keras compatibility.
        from_logits: whether ``y_pred`` holds logits.
        axis: the class axis.
    """

    def __init__(self, name="sparse_categorical_crossentropy", dtype=None, from_logits=False, axis=-1):
        super().__init__(losses.sparse_categorical_crossentropy, name=name, dtype=dtype, from_logits=from_logits,
                         axis=axis)


class KLDivergence(_LossMetric):
    """The running mean of ``losses.kl_divergence`` (default name ``"kl_divergence"``)."""

    def __init__(self, name="kl_divergence", dtype=None):
        super().__init__(losses.kl_divergence, name=name, dtype=dtype)


class Poisson(_LossMetric):
    """The running mean of ``losses.poisson`` (default name ``"poisson"``)."""

    def __init__(self, name="poisson", dtype=None):
        super().__init__(losses.poisson, name=name, dtype=dtype)


class Hinge(_LossMetric):
    """The running mean of ``losses.hinge`` (default name ``"hinge"``)."""

    def __init__(self, name="hinge", dtype=None):
        super().__init__(losses.hinge, name=name, dtype=dtype)


class SquaredHinge(_LossMetric):
    """The running mean of ``losses.squared_hinge`` (default name ``"squared_hinge"``)."""

    def __init__(self, name="squared_hinge", dtype=None):
        super().__init__(losses.squared_hinge, name=name, dtype=dtype)


class CategoricalHinge(_LossMetric):
    """The running mean of ``losses.categorical_hinge`` (default name ``"categorical_hinge"``)."""

    def __init__(self, name="categorical_hinge", dtype=None):
        super().__init__(losses.categorical_hinge, name=name, dtype=dtype)


class LogCoshError(_LossMetric):
    """The running mean of ``losses.log_cosh`` (default name ``"logcosh"``)."""

    def __init__(self, name="logcosh", dtype=None):
        super().__init__(losses.log_cosh, name=name, dtype=dtype)
