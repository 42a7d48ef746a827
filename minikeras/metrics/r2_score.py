"""The coefficient of determination, streamed: R^2 from running sums.

Per output column the metric keeps the weighted sum and sum of squares of
the targets, the weighted squared residuals and the weights, so that
``1 - SS_res / SS_tot`` over all batches equals the score of the whole
dataset at once (as Keras's R2Score).
"""
import warnings

import numpy

from minikeras.metrics.base import Metric, squeeze_or_expand_to_same_rank, to_host

_AGGREGATIONS = (None, "uniform_average", "variance_weighted_average")
_SUMS = ("squared_sum", "sum", "total_mse", "count")


class R2Score(Metric):
    """R^2 (and adjusted R^2) of regression predictions.

    Args:
        class_aggregation: ``"uniform_average"`` (default: the mean over
            output columns), ``"variance_weighted_average"`` (weighted by
            each column's variance) or None (one score per column).
        num_regressors: the number of independent variables, for the
            adjusted R^2 (default 0: plain R^2).
        name: default ``"r2_score"``.
        dtype: kept for Keras compatibility.

    Example:
        >>> m = R2Score()
        >>> m.update_state([[1], [4], [3]], [[2], [4], [4]])
        >>> round(m.result(), 4)
        0.5714
    """

    _summed_state = ("num_samples",) + _SUMS

    def __init__(self, class_aggregation="uniform_average", num_regressors=0, name="r2_score", dtype=None):
        super().__init__(name=name, dtype=dtype)
        if class_aggregation not in _AGGREGATIONS:
            raise ValueError(f"Invalid value for argument `class_aggregation`. Expected one of {_AGGREGATIONS}. "
                             f"Received: class_aggregation={class_aggregation}")
        if num_regressors < 0:
            raise ValueError(f"Invalid value for argument `num_regressors`. Expected a value >= 0. Received: "
                             f"num_regressors={num_regressors}")
        self.class_aggregation, self.num_regressors = class_aggregation, num_regressors
        self._columns = None
        self.reset_state()

    def reset_state(self):
        """Zero the running sums and the sample count."""
        self.num_samples = 0.0
        for name in _SUMS:
            setattr(self, name, numpy.zeros(self._columns or 0))

    def update_state(self, y_true, y_pred, sample_weight=None):
        """Add one batch of ``(batch, outputs)`` targets and predictions."""
        y_true = to_host(y_true, numpy.float64)
        y_pred = to_host(y_pred, numpy.float64)
        y_true, y_pred = squeeze_or_expand_to_same_rank(y_true, y_pred)
        if y_pred.ndim != 2 or y_true.ndim != 2:
            raise ValueError("R2Score expects 2D inputs with shape (batch_size, output_dim). Received input shapes: "
                             f"y_pred.shape={y_pred.shape} and y_true.shape={y_true.shape}.")
        if self._columns is None:
            self._columns = y_pred.shape[-1]
            self.reset_state()
        weights = numpy.ones(()) if sample_weight is None else to_host(sample_weight, numpy.float64)
        if weights.ndim == 1:
            weights = weights[:, None]
        weights = numpy.broadcast_to(weights, y_true.shape)
        weighted = y_true * weights
        self.sum = self.sum + weighted.sum(axis=0)
        self.squared_sum = self.squared_sum + (y_true * weighted).sum(axis=0)
        self.total_mse = self.total_mse + ((y_true - y_pred) ** 2 * weights).sum(axis=0)
        self.count = self.count + weights.sum(axis=0)
        self.num_samples += y_true.size  # Keras counts every entry, not rows

    def result(self):
        """The score (a float, or an array per column with ``class_aggregation=None``)."""
        with numpy.errstate(divide="ignore", invalid="ignore"):
            mean = self.sum / self.count
            total = self.squared_sum - self.sum * mean
            raw = 1 - self.total_mse / total
        raw = numpy.where(numpy.isinf(raw), 0.0, raw)
        if self.class_aggregation == "uniform_average":
            score = raw.mean()
        elif self.class_aggregation == "variance_weighted_average":
            score = (total * raw).sum() / total.sum()
        else:
            score = raw
        if self.num_regressors != 0:
            if self.num_regressors > self.num_samples - 1:
                warnings.warn("More independent predictors than datapoints in adjusted R2 score. Falling back to "
                              "standard R2 score.", stacklevel=2)
            elif self.num_regressors == self.num_samples - 1:
                warnings.warn("Division by zero in Adjusted R2 score. Falling back to standard R2 score.", stacklevel=2)
            else:
                samples, regressors = self.num_samples, self.num_regressors
                score = 1.0 - (1.0 - score) * (samples - 1.0) / (samples - regressors - 1.0)
        return float(score) if numpy.ndim(score) == 0 else score

    def get_config(self):
        """Name, dtype, class_aggregation and num_regressors."""
        return {**super().get_config(), "class_aggregation": self.class_aggregation,
                "num_regressors": self.num_regressors}
