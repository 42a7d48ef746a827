"""One rate at a constraint on another: sensitivity at a specificity,
specificity at a sensitivity, precision at a recall, recall at a precision.

Each accumulates the four confusion counts at ``num_thresholds`` evenly
spaced thresholds in [0, 1] (the bucketed counting of ``confusion.py``, as
Keras) and reports the best value of one rate among the thresholds where the
other meets the constraint, 0.0 when none does.
"""
import numpy

from minikeras.metrics.base import Metric
from minikeras.metrics.confusion import _div_no_nan, confusion_counts

_COUNTS = {"tp": "true_positives", "fp": "false_positives", "tn": "true_negatives", "fn": "false_negatives"}


class SensitivitySpecificityBase(Metric):
    """Shared state: the confusion counts per threshold.

    Args:
        value: the constraint's value.
        num_thresholds: how many thresholds (default 200; 1 means just 0.5).
        class_id: compute the rates for one class (column) only.
        name: the metric's name.
        dtype: kept for Keras compatibility.
    """

    _summed_state = tuple(_COUNTS.values())

    def __init__(self, value, num_thresholds=200, class_id=None, name=None, dtype=None):
        super().__init__(name=name, dtype=dtype)
        if num_thresholds <= 0:
            raise ValueError(f"Argument `num_thresholds` must be an integer > 0. Received: "
                             f"num_thresholds={num_thresholds}")
        self.value, self.class_id = value, class_id
        if num_thresholds == 1:
            self.thresholds, self._evenly = [0.5], False
        else:
            inner = [(i + 1) * 1.0 / (num_thresholds - 1) for i in range(num_thresholds - 2)]
            self.thresholds, self._evenly = [0.0] + inner + [1.0], True
        self.reset_state()

    def reset_state(self):
        """Zero the counts."""
        for attribute in _COUNTS.values():
            setattr(self, attribute, numpy.zeros(len(self.thresholds)))

    def update_state(self, y_true, y_pred, sample_weight=None):
        """Add one batch's counts at every threshold."""
        counts = confusion_counts(y_true, y_pred, self.thresholds, sample_weight, class_id=self.class_id,
                                  evenly_distributed=self._evenly, name=self.name)
        for key, attribute in _COUNTS.items():
            setattr(self, attribute, getattr(self, attribute) + counts[key])

    def _rates(self):
        return {
            "sensitivity": _div_no_nan(self.true_positives, self.true_positives + self.false_negatives),
            "specificity": _div_no_nan(self.true_negatives, self.true_negatives + self.false_positives),
            "precision": _div_no_nan(self.true_positives, self.true_positives + self.false_positives),
        }

    def _max_under_constraint(self, constrained, dependent):
        """The largest ``dependent`` where ``constrained >= value``; 0.0 if none."""
        return float(numpy.max(numpy.where(constrained >= self.value, dependent, 0.0), initial=0.0))

    def get_config(self):
        """Name, dtype and class_id."""
        return {**super().get_config(), "class_id": self.class_id}


def _check_rate(name, value):
    if value < 0 or value > 1:
        raise ValueError(f"Argument `{name}` must be in the range [0, 1]. Received: {name}={value}")


class SensitivityAtSpecificity(SensitivitySpecificityBase):
    """The best sensitivity (recall) among thresholds whose specificity is at least ``specificity``.

    Example:
        >>> m = SensitivityAtSpecificity(0.5)
        >>> m.update_state([0, 0, 0, 1, 1], [0, 0.3, 0.8, 0.3, 0.8])
        >>> m.result()
        0.5
    """

    def __init__(self, specificity, num_thresholds=200, class_id=None, name=None, dtype=None):
        _check_rate("specificity", specificity)
        self.specificity, self.num_thresholds = specificity, num_thresholds
        super().__init__(specificity, num_thresholds=num_thresholds, class_id=class_id, name=name, dtype=dtype)

    def result(self):
        """A float in [0, 1]."""
        rates = self._rates()
        return self._max_under_constraint(rates["specificity"], rates["sensitivity"])

    def get_config(self):
        """Name, dtype, class_id, num_thresholds and specificity."""
        return {**super().get_config(), "num_thresholds": self.num_thresholds, "specificity": self.specificity}


class SpecificityAtSensitivity(SensitivitySpecificityBase):
    """The best specificity among thresholds whose sensitivity is at least ``sensitivity``."""

    def __init__(self, sensitivity, num_thresholds=200, class_id=None, name=None, dtype=None):
        _check_rate("sensitivity", sensitivity)
        self.sensitivity, self.num_thresholds = sensitivity, num_thresholds
        super().__init__(sensitivity, num_thresholds=num_thresholds, class_id=class_id, name=name, dtype=dtype)

    def result(self):
        """A float in [0, 1]."""
        rates = self._rates()
        return self._max_under_constraint(rates["sensitivity"], rates["specificity"])

    def get_config(self):
        """Name, dtype, class_id, num_thresholds and sensitivity."""
        return {**super().get_config(), "num_thresholds": self.num_thresholds, "sensitivity": self.sensitivity}


class PrecisionAtRecall(SensitivitySpecificityBase):
    """The best precision among thresholds whose recall is at least ``recall``."""

    def __init__(self, recall, num_thresholds=200, class_id=None, name=None, dtype=None):
        _check_rate("recall", recall)
        self.recall, self.num_thresholds = recall, num_thresholds
        super().__init__(recall, num_thresholds=num_thresholds, class_id=class_id, name=name, dtype=dtype)

    def result(self):
        """A float in [0, 1]."""
        rates = self._rates()
        return self._max_under_constraint(rates["sensitivity"], rates["precision"])

    def get_config(self):
        """Name, dtype, class_id, num_thresholds and recall."""
        return {**super().get_config(), "num_thresholds": self.num_thresholds, "recall": self.recall}


class RecallAtPrecision(SensitivitySpecificityBase):
    """The best recall among thresholds whose precision is at least ``precision``."""

    def __init__(self, precision, num_thresholds=200, class_id=None, name=None, dtype=None):
        _check_rate("precision", precision)
        self.precision, self.num_thresholds = precision, num_thresholds
        super().__init__(precision, num_thresholds=num_thresholds, class_id=class_id, name=name, dtype=dtype)

    def result(self):
        """A float in [0, 1]."""
        rates = self._rates()
        return self._max_under_constraint(rates["precision"], rates["sensitivity"])

    def get_config(self):
        """Name, dtype, class_id, num_thresholds and precision."""
        return {**super().get_config(), "num_thresholds": self.num_thresholds, "precision": self.precision}
