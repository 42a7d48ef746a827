"""Correlation metrics: Pearson's and Lin's concordance correlation, per
sample along an axis, averaged over batches (``keras.metrics`` functions
and their MeanMetricWrapper classes)."""
import numpy

from minikeras.metrics.base import MeanMetricWrapper, squeeze_or_expand_to_same_rank, to_host

_EPSILON = 1e-7  # keras.backend.epsilon()


def _pair(y_true, y_pred):
    y_pred = to_host(y_pred, numpy.float64)
    y_true = to_host(y_true, numpy.float64)
    return squeeze_or_expand_to_same_rank(y_true, y_pred)


def pearson_correlation(y_true, y_pred, axis=-1):
    """Pearson's correlation coefficient of ``y_true`` and ``y_pred`` along ``axis``.

    Example:
        >>> pearson_correlation([[1, 2, 3]], [[2, 4, 7]]).round(4)
        array([0.9934])
    """
    y_true, y_pred = _pair(y_true, y_pred)
    true_centered = y_true - y_true.mean(axis=axis, keepdims=True)
    pred_centered = y_pred - y_pred.mean(axis=axis, keepdims=True)
    true_centered = true_centered / true_centered.std(axis=axis, keepdims=True)
    pred_centered = pred_centered / pred_centered.std(axis=axis, keepdims=True)
    return (true_centered * pred_centered).mean(axis=axis)


def concordance_correlation(y_true, y_pred, axis=-1):
    """Lin's concordance correlation along ``axis``, as Keras 3.15 computes it.

    Keras centres both factors of the covariance term on the prediction mean,
    ``(y_true - mean(y_pred)) * (y_pred - mean(y_pred))``; that is kept, so
    values match Keras (it equals the textbook formula when the means agree).
    """
    y_true, y_pred = _pair(y_true, y_pred)
    true_mean = y_true.mean(axis=axis, keepdims=True)
    pred_mean = y_pred.mean(axis=axis, keepdims=True)
    true_var = (y_true - true_mean).var(axis=axis, keepdims=True)
    pred_var = (y_pred - pred_mean).var(axis=axis, keepdims=True)
    covariance = (y_true - pred_mean) * (y_pred - pred_mean)
    norm = true_var + pred_var + numpy.square(true_mean - pred_mean)
    return (2 * covariance / (norm + _EPSILON)).mean(axis=axis)


class PearsonCorrelation(MeanMetricWrapper):
    """The running mean of ``pearson_correlation`` along ``axis``.

    Args:
        name: default ``"pearson_correlation"``.
        dtype: kept for Keras compatibility.
        axis: the axis the correlation is over (default -1).
    """

    def __init__(self, name="pearson_correlation", dtype=None, axis=-1):
        super().__init__(pearson_correlation, name=name, dtype=dtype, axis=axis)
        self.axis = axis

    def get_config(self):
        """Name, dtype and axis."""
        return {"name": self.name, "dtype": self.dtype, "axis": self.axis}


class ConcordanceCorrelation(MeanMetricWrapper):
    """The running mean of ``concordance_correlation`` along ``axis``.

    Args:
        name: default ``"concordance_correlation"``.
        dtype: kept for Keras compatibility.
        axis: the axis the correlation is over (default -1).
    """

    def __init__(self, name="concordance_correlation", dtype=None, axis=-1):
        super().__init__(concordance_correlation, name=name, dtype=dtype, axis=axis)
        self.axis = axis

    def get_config(self):
        """Name, dtype and axis."""
        return {"name": self.name, "dtype": self.dtype, "axis": self.axis}
