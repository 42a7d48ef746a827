"""Confusion-matrix metrics: true/false positive/negative counts, Precision,
Recall and AUC, computed the way Keras computes them.

A prediction counts as positive at threshold ``t`` when ``y_pred > t``.
Labels are positive when non-zero. Counts are accumulated per threshold in
float64 on the host. With evenly spaced thresholds (AUC's default) each
prediction is dropped into its threshold bucket and the counts are a
reversed cumulative sum, O(N + T) instead of O(N * T), exactly as Keras does
it, so results match Keras bucket for bucket.
"""
import numpy

from minikeras.metrics.base import Metric, squeeze_or_expand_to_same_rank, to_host

_EPSILON = 1e-7  # keras.backend.epsilon()
NEG_INF = -1e10  # the score Keras gives predictions outside the top k
_COUNTS = ("tp", "fp", "tn", "fn")


def _as_threshold_list(thresholds, default):
    if thresholds is None:
        return [float(default)]
    values = [thresholds] if isinstance(thresholds, (int, float)) else list(thresholds)
    bad = [t for t in values if t is None or not 0 <= t <= 1]
    if bad or not values:
        raise ValueError(f"Threshold values must be in [0, 1]; received {thresholds!r}.")
    return [float(t) for t in values]


def is_evenly_distributed(thresholds):
    """True when ``thresholds`` are ``i / (n - 1)`` for ``i = 0 .. n - 1`` (n >= 3)."""
    count = len(thresholds)
    if count < 3:
        return False
    even = numpy.arange(count, dtype=numpy.float32) / (count - 1)
    return bool(numpy.allclose(thresholds, even, atol=_EPSILON))


def _filter_top_k(scores, k):
    """Keep the ``k`` largest scores of the last axis; set the rest to NEG_INF.

    Ties go to the lower index, as ``top_k`` does in Keras backends.
    """
    order = numpy.argsort(-scores, axis=-1, kind="stable")[..., :k]
    mask = numpy.zeros(scores.shape, dtype=bool)
    numpy.put_along_axis(mask, order, True, axis=-1)
    return numpy.where(mask, scores, numpy.float32(NEG_INF)).astype(scores.dtype)


def _div_no_nan(numerator, denominator):
    numerator, denominator = numpy.broadcast_arrays(numpy.asarray(numerator, numpy.float64), denominator)
    out = numpy.zeros(numerator.shape)
    numpy.divide(numerator, denominator, out=out, where=denominator != 0)
    return out


def confusion_counts(
    y_true, y_pred, thresholds, sample_weight=None, top_k=None, class_id=None, multi_label=False,
    label_weights=None, evenly_distributed=False, name="confusion_matrix",
):
    """Weighted true/false positive/negative counts of one batch per threshold.

    Args:
        y_true: labels (positive where non-zero), same shape as ``y_pred``
            up to a trailing size-1 axis.
        y_pred: scores, normally in [0, 1].
        thresholds: 1-D sequence of thresholds.
        sample_weight: per-sample weights (shape ``(N,)``) or broadcastable
            to ``y_pred``.
        top_k: count as positive only the top-k scores of the last axis.
        class_id: restrict to this class (column of the last axis).
        multi_label: keep the label axis (counts get shape ``(T, L)``).
        label_weights: per-label weights, when not ``multi_label``.
        evenly_distributed: use the bucket algorithm (thresholds must be
            evenly spaced, possibly with the end points moved by epsilon).
        name: the metric's name, for error messages.

    Returns:
        dict with ``"tp", "fp", "tn", "fn"``: float64 arrays of shape
        ``(T,)`` (or ``(T, L)`` with ``multi_label``).
    """
    y_true = to_host(y_true, numpy.float32)
    y_pred = to_host(y_pred, numpy.float32)
    y_pred, y_true = squeeze_or_expand_to_same_rank(y_pred, y_true)
    if y_true.shape != y_pred.shape:
        raise ValueError(
            f"{name}: y_true and y_pred must have the same shape, received y_true shape {y_true.shape} "
            f"and y_pred shape {y_pred.shape}."
        )
    weights = None
    if sample_weight is not None:
        weights = to_host(sample_weight, numpy.float32)[..., None]
        _, weights = squeeze_or_expand_to_same_rank(y_true, weights, expand_rank_1=False)
    if top_k is not None:
        y_pred = _filter_top_k(y_pred, top_k)
    if class_id is not None:
        if y_pred.ndim < 2:
            raise ValueError(
                f"{name}: class_id needs y_pred of shape (num_samples, num_classes), received shape {y_pred.shape}."
            )
        if not 0 <= class_id < y_pred.shape[-1]:
            raise ValueError(f"{name}: class_id {class_id} is out of range for {y_pred.shape[-1]} classes.")
        y_true = y_true[..., class_id, None]
        y_pred = y_pred[..., class_id, None]
    if weights is not None:
        try:
            weights = numpy.broadcast_to(weights, y_pred.shape)
        except ValueError:
            raise ValueError(
                f"{name}: sample_weight of shape {numpy.shape(sample_weight)} does not broadcast to y_pred of "
                f"shape {y_pred.shape}."
            ) from None
    if label_weights is not None and not multi_label:
        label_weights = numpy.broadcast_to(numpy.asarray(label_weights, numpy.float32)[None], y_pred.shape)
        weights = label_weights if weights is None else weights * label_weights
    if multi_label and y_pred.ndim != 2:
        raise ValueError(f"{name}: multi_label needs y_pred of rank 2, received shape {y_pred.shape}.")
    positive = y_true != 0
    if not multi_label:
        positive, y_pred = positive.reshape(-1), y_pred.reshape(-1)
        weights = None if weights is None else weights.reshape(-1)
    weights = numpy.ones(y_pred.shape) if weights is None else weights.astype(numpy.float64)
    true_weights = numpy.where(positive, weights, 0.0)
    false_weights = weights - true_weights
    thresholds = numpy.asarray(thresholds, numpy.float32)
    if evenly_distributed:
        tp, fp = _bucket_counts(y_pred, thresholds, true_weights, false_weights, multi_label)
    else:
        above = y_pred[None] > thresholds.reshape((-1,) + (1,) * y_pred.ndim)
        tp = (above * true_weights).sum(axis=1)
        fp = (above * false_weights).sum(axis=1)
    total_true = true_weights.sum(axis=0)
    total_false = false_weights.sum(axis=0)
    return {"tp": tp, "fp": fp, "tn": total_false - fp, "fn": total_true - tp}


def _bucket_counts(y_pred, thresholds, true_weights, false_weights, multi_label):
    """tp and fp per threshold by bucketing (Keras's optimized algorithm)."""
    count = thresholds.shape[0]
    with_epsilon = thresholds[0] < 0.0 or thresholds[-1] > 1.0
    scores = numpy.clip(y_pred, 0.0, 1.0)
    # A score belongs to the bucket of the highest threshold it strictly
    # exceeds: ceil(p * (T - 1)) - 1, computed in float32 as Keras does.
    buckets = numpy.ceil(scores * numpy.float32(count - 1)) - 1
    if with_epsilon:
        buckets = numpy.maximum(buckets, 0)  # every score exceeds the -epsilon threshold
    buckets = buckets.astype(numpy.int64)
    valid = buckets >= 0  # a score of exactly 0 exceeds no threshold 0
    if multi_label:
        labels = buckets.shape[1]
        index = (buckets * labels + numpy.arange(labels))[valid]
        size = count * labels
        tp = numpy.bincount(index, true_weights[valid], minlength=size).reshape(count, labels)
        fp = numpy.bincount(index, false_weights[valid], minlength=size).reshape(count, labels)
    else:
        tp = numpy.bincount(buckets[valid], true_weights[valid], minlength=count)
        fp = numpy.bincount(buckets[valid], false_weights[valid], minlength=count)
    return tp[::-1].cumsum(axis=0)[::-1], fp[::-1].cumsum(axis=0)[::-1]


class _ConfusionMetric(Metric):
    """Shared state handling: per-threshold float64 counters."""

    _kept = _COUNTS

    @property
    def _summed_state(self):
        return tuple(_ATTRIBUTES[key] for key in self._kept)

    def _init_thresholds(self, thresholds, top_k):
        self.init_thresholds = thresholds
        self.thresholds = _as_threshold_list(thresholds, 0.5 if top_k is None else NEG_INF)
        self._evenly = is_evenly_distributed(self.thresholds)
        self.reset_state()

    def reset_state(self):
        """Set every counter back to zero."""
        for key in self._kept:
            setattr(self, _ATTRIBUTES[key], numpy.zeros(len(self.thresholds)))

    def update_state(self, y_true, y_pred, sample_weight=None):
        """Add one batch's counts."""
        counts = confusion_counts(
            y_true, y_pred, self.thresholds, sample_weight, top_k=getattr(self, "top_k", None),
            class_id=getattr(self, "class_id", None), evenly_distributed=self._evenly, name=self.name,
        )
        for key in self._kept:
            attribute = _ATTRIBUTES[key]
            setattr(self, attribute, getattr(self, attribute) + counts[key])

    def _per_threshold(self, values):
        return float(values[0]) if len(self.thresholds) == 1 else values


_ATTRIBUTES = {"tp": "true_positives", "fp": "false_positives", "tn": "true_negatives", "fn": "false_negatives"}


class _CountMetric(_ConfusionMetric):
    _key = "tp"

    def __init__(self, thresholds=None, name=None, dtype=None):
        super().__init__(name=name, dtype=dtype)
        self._kept = (self._key,)
        self._init_thresholds(thresholds, None)

    def result(self):
        """The weighted count (a float, or an array with several thresholds)."""
        return self._per_threshold(getattr(self, _ATTRIBUTES[self._key]).copy())

    def get_config(self):
        """Name, dtype and thresholds."""
        return {**super().get_config(), "thresholds": self.init_thresholds}


class TruePositives(_CountMetric):
    """The weighted number of true positives (``y_true != 0`` and ``y_pred > threshold``)."""

    _key = "tp"


class FalsePositives(_CountMetric):
    """The weighted number of false positives (``y_true == 0`` and ``y_pred > threshold``)."""

    _key = "fp"


class TrueNegatives(_CountMetric):
    """The weighted number of true negatives (``y_true == 0`` and ``y_pred <= threshold``)."""

    _key = "tn"


class FalseNegatives(_CountMetric):
    """The weighted number of false negatives (``y_true != 0`` and ``y_pred <= threshold``)."""

    _key = "fn"


class Precision(_ConfusionMetric):
    """``tp / (tp + fp)``: the fraction of predicted positives that are positive.

    Args:
        thresholds: a float or list of floats in [0, 1] (default 0.5; with
            ``top_k``, no threshold). With several, ``result()`` is an array.
        top_k: count only the top-k scores of each row as predicted positive.
        class_id: compute it for one class (column) only.
        name: metric name (default ``"precision"``).
        dtype: kept for Keras compatibility.

    Example:
        >>> Precision()([0, 1, 1, 1], [1, 0, 1, 1])
        0.6666666666666666
    """

    _kept = ("tp", "fp")

    def __init__(self, thresholds=None, top_k=None, class_id=None, name=None, dtype=None):
        super().__init__(name=name, dtype=dtype)
        self.top_k, self.class_id = top_k, class_id
        self._init_thresholds(thresholds, top_k)

    def result(self):
        """Precision (0.0 when nothing was predicted positive)."""
        return self._per_threshold(_div_no_nan(self.true_positives, self.true_positives + self.false_positives))

    def get_config(self):
        """Name, dtype, thresholds, top_k and class_id."""
        return {**super().get_config(), "thresholds": self.init_thresholds, "top_k": self.top_k,
                "class_id": self.class_id}


class Recall(_ConfusionMetric):
    """``tp / (tp + fn)``: the fraction of positives predicted positive.

    Args:
        thresholds: a float or list of floats in [0, 1] (default 0.5).
        top_k: count only the top-k scores of each row as predicted positive.
        class_id: compute it for one class (column) only.
        name: metric name (default ``"recall"``).
        dtype: kept for Keras compatibility.

    Example:
        >>> Recall()([0, 1, 1, 1], [1, 0, 1, 1])
        0.6666666666666666
    """

    _kept = ("tp", "fn")

    def __init__(self, thresholds=None, top_k=None, class_id=None, name=None, dtype=None):
        super().__init__(name=name, dtype=dtype)
        self.top_k, self.class_id = top_k, class_id
        self._init_thresholds(thresholds, top_k)

    def result(self):
        """Recall (0.0 when there were no positives)."""
        return self._per_threshold(_div_no_nan(self.true_positives, self.true_positives + self.false_negatives))

    def get_config(self):
        """Name, dtype, thresholds, top_k and class_id."""
        return {**super().get_config(), "thresholds": self.init_thresholds, "top_k": self.top_k,
                "class_id": self.class_id}
