"""F-beta and F1 scores over classes, streamed as Keras streams them.

Per class (or summed over classes with ``average="micro"``) the metric
keeps weighted true positives, false positives, false negatives and label
totals; ``result()`` turns them into ``(1 + b^2) P R / (b^2 P + R)`` with
Keras's epsilon in every division, so it matches Keras batch by batch.
"""
import numpy

from minikeras.metrics.base import Metric, to_host

_EPSILON = 1e-7  # keras.backend.epsilon()
_AVERAGES = (None, "micro", "macro", "weighted")
_COUNTERS = ("true_positives", "false_positives", "false_negatives", "intermediate_weights")


class FBetaScore(Metric):
    """The F-beta score of multi-class or multi-label predictions.

    Args:
        average: None (a score per class), ``"micro"`` (counts summed over
            classes first), ``"macro"`` (mean of the per-class scores) or
            ``"weighted"`` (their mean weighted by each class's label total).
        beta: a float > 0; recall counts ``beta`` times as much as precision.
        threshold: a float in (0, 1]: predictions above it are positive. None
            (default): the largest prediction of each row is the positive one.
        name: default ``"fbeta_score"``.
        dtype: kept for Keras compatibility.

    Inputs are 2-D, ``(batch, classes)``, in one-hot/multi-hot form.

    Example:
        >>> m = FBetaScore(beta=2.0, threshold=0.5)
        >>> m.update_state([[1, 1, 1], [1, 0, 0], [1, 1, 0]], [[0.2, 0.6, 0.7], [0.2, 0.6, 0.6], [0.6, 0.8, 0.0]])
        >>> m.result().round(4)
        array([0.3846, 0.9091, 0.5556])
    """

    _summed_state = _COUNTERS

    def __init__(self, average=None, beta=1.0, threshold=None, name="fbeta_score", dtype=None):
        super().__init__(name=name, dtype=dtype)
        if average not in _AVERAGES:
            raise ValueError("Invalid `average` argument value. Expected one of: {None, 'micro', 'macro', "
                             f"'weighted'}}. Received: average={average}")
        if not isinstance(beta, float):
            raise ValueError(f"Invalid `beta` argument value. It should be a Python float. Received: beta={beta} of "
                             f"type '{type(beta)}'")
        if beta <= 0.0:
            raise ValueError(f"Invalid `beta` argument value. It should be > 0. Received: beta={beta}")
        if threshold is not None:
            if not isinstance(threshold, float):
                raise ValueError("Invalid `threshold` argument value. It should be a Python float. Received: "
                                 f"threshold={threshold} of type '{type(threshold)}'")
            if threshold > 1.0 or threshold <= 0.0:
                raise ValueError("Invalid `threshold` argument value. It should verify 0 < threshold <= 1. "
                                 f"Received: threshold={threshold}")
        self.average, self.beta, self.threshold = average, beta, threshold
        self.axis = None if average == "micro" else 0
        self._classes = None
        self.reset_state()

    def reset_state(self):
        """Zero the counters (their shape is set by the first batch)."""
        shape = () if self.average == "micro" or self._classes is None else (self._classes,)
        for counter in _COUNTERS:
            setattr(self, counter, numpy.zeros(shape))

    def update_state(self, y_true, y_pred, sample_weight=None):
        """Add one batch of ``(batch, classes)`` labels and predictions."""
        y_true = to_host(y_true, numpy.float64)
        y_pred = to_host(y_pred, numpy.float32)
        if y_pred.ndim != 2 or y_true.ndim != 2:
            raise ValueError(f"{type(self).__name__} expects 2D inputs with shape (batch_size, output_dim). Received "
                             f"input shapes: y_pred.shape={y_pred.shape} and y_true.shape={y_true.shape}.")
        if self._classes is None:
            self._classes = y_pred.shape[-1]
            self.reset_state()
        elif y_pred.shape[-1] != self._classes:
            raise ValueError(f"{type(self).__name__} was built for {self._classes} classes, received y_pred of shape "
                             f"{y_pred.shape}.")
        if self.threshold is None:
            predicted = (y_pred >= y_pred.max(axis=-1, keepdims=True)) & (numpy.abs(y_pred) > 1e-9)
        else:
            predicted = y_pred > self.threshold
        predicted = predicted.astype(numpy.float64)
        weights = None if sample_weight is None else to_host(sample_weight, numpy.float64).reshape(-1, 1)

        def weighted_sum(values):
            if weights is not None:
                values = values * weights
            return values.sum(axis=self.axis)

        self.true_positives = self.true_positives + weighted_sum(predicted * y_true)
        self.false_positives = self.false_positives + weighted_sum(predicted * (1 - y_true))
        self.false_negatives = self.false_negatives + weighted_sum((1 - predicted) * y_true)
        self.intermediate_weights = self.intermediate_weights + weighted_sum(y_true)

    def result(self):
        """The score: an array with one per class for ``average=None``, else a float."""
        precision = self.true_positives / (self.true_positives + self.false_positives + _EPSILON)
        recall = self.true_positives / (self.true_positives + self.false_negatives + _EPSILON)
        beta_squared = self.beta ** 2
        score = precision * recall / (beta_squared * precision + recall + _EPSILON) * (1 + beta_squared)
        if self.average == "weighted":
            weights = self.intermediate_weights / (self.intermediate_weights.sum() + _EPSILON)
            return float((score * weights).sum())
        if self.average is not None:
            return float(numpy.mean(score))
        return score

    def get_config(self):
        """Name, dtype, average, beta and threshold."""
        return {**super().get_config(), "average": self.average, "beta": self.beta, "threshold": self.threshold}


class F1Score(FBetaScore):
    """The F1 score: ``FBetaScore`` with ``beta=1.0``.

    Args:
        average: None, ``"micro"``, ``"macro"`` or ``"weighted"``.
        threshold: a float in (0, 1], or None (the top prediction of each row).
        name: default ``"f1_score"``.
        dtype: kept for Keras compatibility.
    """

    def __init__(self, average=None, threshold=None, name="f1_score", dtype=None):
        super().__init__(average=average, beta=1.0, threshold=threshold, name=name, dtype=dtype)

    def get_config(self):
        """Name, dtype, average and threshold (beta is always 1)."""
        config = super().get_config()
        del config["beta"]
        return config
