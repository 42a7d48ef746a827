"""AUC: the area under the ROC or precision-recall curve, from confusion
counts at a fixed set of thresholds (Keras's streaming approximation)."""
import numpy

from minikeras.metrics.base import Metric, to_host
from minikeras.metrics.confusion import _EPSILON, _div_no_nan, confusion_counts, is_evenly_distributed
from minikeras._support.argument_validation import is_int

_CURVES = {"roc": "ROC", "pr": "PR"}
_SUMMATIONS = ("interpolation", "minoring", "majoring")


class AUC(Metric):
    """Area under the ROC or PR curve, approximated with a Riemann sum over
    ``num_thresholds`` thresholds, as ``keras.metrics.AUC``.

    Args:
        num_thresholds: how many thresholds (evenly spaced in [0, 1], with the
            end points moved out by epsilon); default 200.
        curve: ``"ROC"`` (default) or ``"PR"``.
        summation_method: ``"interpolation"`` (default; for PR, the
            Davis & Goadrich interpolation), ``"minoring"`` or ``"majoring"``.
        name: metric name (default ``"auc"``).
        dtype: kept for Keras compatibility.
        thresholds: explicit thresholds in [0, 1] instead of ``num_thresholds``.
        multi_label: treat each column as its own label and average the AUCs.
        num_labels: the number of labels with ``multi_label`` (else taken
            from the first batch).
        label_weights: per-label weights (averaging weights with
            ``multi_label``, count weights otherwise).
        from_logits: apply a sigmoid to ``y_pred`` first.

    Example:
        >>> m = AUC(num_thresholds=3)
        >>> m([0, 0, 1, 1], [0, 0.5, 0.3, 0.9])
        0.75
    """

    _summed_state = ("true_positives", "false_positives", "true_negatives", "false_negatives")

    def __init__(
        self, num_thresholds=200, curve="ROC", summation_method="interpolation", name=None, dtype=None,
        thresholds=None, multi_label=False, num_labels=None, label_weights=None, from_logits=False,
    ):
        super().__init__(name=name, dtype=dtype)
        if str(curve).lower() not in _CURVES:
            raise ValueError(f'AUC: invalid curve "{curve}"; expected one of ["ROC", "PR"].')
        if str(summation_method).lower() not in _SUMMATIONS:
            raise ValueError(
                f'AUC: invalid summation_method "{summation_method}"; expected one of {list(_SUMMATIONS)}.'
            )
        self.curve = _CURVES[str(curve).lower()]
        self.summation_method = str(summation_method).lower()
        self._init_from_thresholds = thresholds is not None
        if thresholds is not None:
            inner = sorted(float(t) for t in thresholds)
            if any(not 0 <= t <= 1 for t in inner):
                raise ValueError(f"AUC: threshold values must be in [0, 1], received {thresholds!r}.")
            self.num_thresholds = len(inner) + 2
            self._evenly = is_evenly_distributed(numpy.array([0.0] + inner + [1.0]))
        else:
            if not is_int(num_thresholds) or num_thresholds <= 1:
                raise ValueError(f"AUC: num_thresholds must be an integer > 1, received {num_thresholds}.")
            self.num_thresholds = int(num_thresholds)
            inner = [(i + 1) * 1.0 / (num_thresholds - 1) for i in range(num_thresholds - 2)]
            self._evenly = True
        # End points just outside [0, 1], so that scores of exactly 0 or 1
        # fall inside the curve despite rounding.
        self._thresholds = numpy.array([0.0 - _EPSILON] + inner + [1.0 + _EPSILON])
        self.multi_label = bool(multi_label)
        if num_labels and not self.multi_label:
            raise ValueError("AUC: num_labels is needed only when multi_label is True.")
        self.num_labels = num_labels
        self.label_weights = None if label_weights is None else numpy.asarray(label_weights, numpy.float64)
        self._from_logits = bool(from_logits)
        self._count_shape = None
        if not self.multi_label:
            self._count_shape = (self.num_thresholds,)
        elif num_labels:
            self._count_shape = (self.num_thresholds, int(num_labels))
        self.reset_state()

    @property
    def thresholds(self):
        """The thresholds used, including the two end points."""
        return list(self._thresholds)

    def reset_state(self):
        """Set every counter back to zero."""
        shape = self._count_shape or (self.num_thresholds, 0)
        self.true_positives = numpy.zeros(shape)
        self.false_positives = numpy.zeros(shape)
        self.true_negatives = numpy.zeros(shape)
        self.false_negatives = numpy.zeros(shape)

    def update_state(self, y_true, y_pred, sample_weight=None):
        """Add one batch's confusion counts at every threshold."""
        y_pred = to_host(y_pred, numpy.float32)
        if self._from_logits:
            y_pred = (1.0 / (1.0 + numpy.exp(-y_pred))).astype(numpy.float32)
        if self._count_shape is None:  # multi_label, labels known from the first batch
            if y_pred.ndim != 2:
                raise ValueError(f"{self.name}: multi_label needs y_pred of rank 2, received shape {y_pred.shape}.")
            self._count_shape = (self.num_thresholds, y_pred.shape[1])
            self.reset_state()
        counts = confusion_counts(
            y_true, y_pred, self._thresholds, sample_weight, multi_label=self.multi_label,
            label_weights=None if self.multi_label else self.label_weights,
            evenly_distributed=self._evenly, name=self.name,
        )
        self.true_positives = self.true_positives + counts["tp"]
        self.false_positives = self.false_positives + counts["fp"]
        self.true_negatives = self.true_negatives + counts["tn"]
        self.false_negatives = self.false_negatives + counts["fn"]

    def _average_labels(self, by_label):
        if not self.multi_label:
            return float(by_label)
        if self.label_weights is None:
            return float(numpy.mean(by_label)) if by_label.size else 0.0
        return float(_div_no_nan(numpy.sum(by_label * self.label_weights), numpy.sum(self.label_weights)))

    def _interpolate_pr_auc(self):
        """PR AUC by interpolating tp and fp linearly between thresholds
        (Davis & Goadrich 2006), as Keras does."""
        tp, fp, fn = self.true_positives, self.false_positives, self.false_negatives
        dtp = tp[:-1] - tp[1:]
        p = tp + fp
        dp = p[:-1] - p[1:]
        precision_slope = _div_no_nan(dtp, numpy.maximum(dp, 0))
        intercept = tp[1:] - precision_slope * p[1:]
        both_positive = (p[:-1] > 0) & (p[1:] > 0)
        safe_ratio = numpy.where(both_positive, _div_no_nan(p[:-1], numpy.maximum(p[1:], 0)), 1.0)
        increments = _div_no_nan(
            precision_slope * (dtp + intercept * numpy.log(safe_ratio)), numpy.maximum(tp[1:] + fn[1:], 0)
        )
        return self._average_labels(increments.sum(axis=0))

    def result(self):
        """The area under the curve, a Python float."""
        if self.curve == "PR" and self.summation_method == "interpolation":
            return self._interpolate_pr_auc()
        tp, fp, tn, fn = self.true_positives, self.false_positives, self.true_negatives, self.false_negatives
        recall = _div_no_nan(tp, tp + fn)
        if self.curve == "ROC":
            x, y = _div_no_nan(fp, fp + tn), recall
        else:
            x, y = recall, _div_no_nan(tp, tp + fp)
        if self.summation_method == "interpolation":
            heights = (y[:-1] + y[1:]) / 2.0
        elif self.summation_method == "minoring":
            heights = numpy.minimum(y[:-1], y[1:])
        else:
            heights = numpy.maximum(y[:-1], y[1:])
        return self._average_labels(((x[:-1] - x[1:]) * heights).sum(axis=0))

    def get_config(self):
        """The constructor arguments."""
        config = {
            **super().get_config(),
            "num_thresholds": self.num_thresholds,
            "curve": self.curve,
            "summation_method": self.summation_method,
            "multi_label": self.multi_label,
            "num_labels": self.num_labels,
            "label_weights": None if self.label_weights is None else self.label_weights.tolist(),
            "from_logits": self._from_logits,
        }
        if self._init_from_thresholds:
            config["thresholds"] = self.thresholds[1:-1]
        return config
