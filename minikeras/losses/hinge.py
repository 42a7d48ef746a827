"""Hinge losses for -1/1 (or 0/1) labels: hinge, squared hinge, categorical hinge."""
from minikeras import ops
from minikeras.losses.loss import LossFunctionWrapper, checks_inputs, prepare


def _signed_labels(y_true):
    """0/1 labels become -1/1 (labels already in -1/1, or other values, stay)."""
    data, device = y_true.data, y_true.device
    with device.activate():
        zero_one = ((data == 0) | (data == 1)).all()
    if device.item(zero_one):
        return y_true * 2.0 - 1.0
    return y_true


@checks_inputs
def hinge(y_true, y_pred):
    """``mean(maximum(1 - y_true * y_pred, 0), axis=-1)``; 0/1 labels are
    converted to -1/1 first."""
    y_true, y_pred = prepare("hinge", y_true, y_pred)
    return ops.mean(ops.maximum(1.0 - _signed_labels(y_true) * y_pred, 0.0), axis=-1)


@checks_inputs
def squared_hinge(y_true, y_pred):
    """``mean(square(maximum(1 - y_true * y_pred, 0)), axis=-1)``; 0/1 labels
    are converted to -1/1 first."""
    y_true, y_pred = prepare("squared_hinge", y_true, y_pred)
    return ops.mean(ops.square(ops.maximum(1.0 - _signed_labels(y_true) * y_pred, 0.0)), axis=-1)


@checks_inputs
def categorical_hinge(y_true, y_pred):
    """``maximum(neg - pos + 1, 0)`` with ``pos = sum(y_true * y_pred)`` and
    ``neg = max((1 - y_true) * y_pred)`` over the last axis (one-hot labels)."""
    y_true, y_pred = prepare("categorical_hinge", y_true, y_pred)
    positive = ops.sum(y_true * y_pred, axis=-1)
    negative = ops.max((1.0 - y_true) * y_pred, axis=-1)
    return ops.maximum(negative - positive + 1.0, 0.0)


class Hinge(LossFunctionWrapper):
    """Hinge loss (``name="hinge"``)."""

    def __init__(self, reduction="sum_over_batch_size", name="hinge", dtype=None):
        super().__init__(hinge, reduction=reduction, name=name, dtype=dtype)

    def get_config(self):
        """Name and reduction."""
        return {"name": self.name, "reduction": self.reduction}


class SquaredHinge(LossFunctionWrapper):
    """Squared hinge loss (``name="squared_hinge"``)."""

    def __init__(self, reduction="sum_over_batch_size", name="squared_hinge", dtype=None):
        super().__init__(squared_hinge, reduction=reduction, name=name, dtype=dtype)

    def get_config(self):
        """Name and reduction."""
        return {"name": self.name, "reduction": self.reduction}


class CategoricalHinge(LossFunctionWrapper):
    """Categorical hinge loss (``name="categorical_hinge"``)."""

    def __init__(self, reduction="sum_over_batch_size", name="categorical_hinge", dtype=None):
        super().__init__(categorical_hinge, reduction=reduction, name=name, dtype=dtype)

    def get_config(self):
        """Name and reduction."""
        return {"name": self.name, "reduction": self.reduction}
