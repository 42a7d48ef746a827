"""Overlap losses for segmentation masks: Dice and Tversky.

Both measure how much of the predicted mask covers the true one over the
axes given (``axis=None``: the whole batch gives one value, as Keras), so
they are insensitive to how much background an image has, unlike a
per-pixel cross-entropy.
"""
from minikeras import ops
from minikeras.losses.loss import EPSILON, LossFunctionWrapper, as_prediction, as_target, checks_inputs, matched_shapes
from minikeras.losses.loss import check_same_shape, reshaped


def _overlap_pair(name, y_true, y_pred):
    y_pred = as_prediction(y_pred)
    y_true = as_target(y_true, y_pred)
    received = (y_true.shape, y_pred.shape)
    true_shape, pred_shape = matched_shapes(*received)
    y_true, y_pred = reshaped(y_true, true_shape), reshaped(y_pred, pred_shape)
    check_same_shape(name, y_true, y_pred, received)
    return y_true, y_pred


def _axis(axis):
    return tuple(axis) if isinstance(axis, list) else axis


@checks_inputs
def dice(y_true, y_pred, axis=None):
    """``1 - 2 sum(y_true y_pred) / (sum(y_true) + sum(y_pred) + eps)`` over ``axis``.

    Args:
        y_true: the true mask (0/1 or soft).
        y_pred: the predicted mask, of the same shape.
        axis: the axes to sum over (default: all, giving one value).

    Example:
        >>> y_true = [[[[1.0], [1.0]], [[0.0], [0.0]]], [[[1.0], [1.0]], [[0.0], [0.0]]]]
        >>> y_pred = [[[[0.0], [1.0]], [[0.0], [1.0]]], [[[0.4], [0.0]], [[0.0], [0.9]]]]
        >>> dice(y_true, minikeras.tensor(y_pred), axis=(1, 2, 3)).numpy()
        array([0.5       , 0.75757575], dtype=float32)
    """
    y_true, y_pred = _overlap_pair("dice", y_true, y_pred)
    axis = _axis(axis)
    intersection = ops.sum(y_true * y_pred, axis=axis)
    total = ops.sum(y_true, axis=axis) + ops.sum(y_pred, axis=axis) + EPSILON
    return 1.0 - 2.0 * intersection / total


@checks_inputs
def tversky(y_true, y_pred, alpha=0.5, beta=0.5, axis=None):
    """``1 - tp / (tp + alpha fp + beta fn + eps)`` over ``axis`` (Salehi et
    al., 2017); ``alpha = beta = 0.5`` is the Dice loss.

    Args:
        y_true: the true mask.
        y_pred: the predicted mask, of the same shape.
        alpha: the weight of false positives, ``sum((1 - y_pred) y_true)``
            as Keras writes it.
        beta: the weight of false negatives, ``sum(y_pred (1 - y_true))``.
        axis: the axes to sum over (default: all).
    """
    y_true, y_pred = _overlap_pair("tversky", y_true, y_pred)
    axis = _axis(axis)
    intersection = ops.sum(y_true * y_pred, axis=axis)
    false_positives = ops.sum((1.0 - y_pred) * y_true, axis=axis)
    false_negatives = ops.sum(y_pred * (1.0 - y_true), axis=axis)
    return 1.0 - intersection / (intersection + false_positives * alpha + false_negatives * beta + EPSILON)


class Dice(LossFunctionWrapper):
    """The Dice loss (``dice``), reduced.

    Args:
        reduction: see ``Loss`` (default ``"sum_over_batch_size"``).
        name: default ``"dice"``.
        axis: the axes to sum over (default None: all).
        dtype: kept for Keras compatibility.
    """

    def __init__(self, reduction="sum_over_batch_size", name="dice", axis=None, dtype=None):
        super().__init__(dice, reduction=reduction, name=name, dtype=dtype, axis=axis)
        self.axis = axis

    def get_config(self):
        """Name, reduction and axis."""
        return {"name": self.name, "reduction": self.reduction, "axis": self.axis}


class Tversky(LossFunctionWrapper):
    """The Tversky loss (``tversky``), reduced.

    Args:
        alpha: the false-positive weight (default 0.5).
        beta: the false-negative weight (default 0.5).
        reduction: see ``Loss`` (default ``"sum_over_batch_size"``).
        name: default ``"tversky"``.
        axis: the axes to sum over (default None: all).
        dtype: kept for Keras compatibility.
    """

    def __init__(self, alpha=0.5, beta=0.5, reduction="sum_over_batch_size", name="tversky", axis=None, dtype=None):
        super().__init__(tversky, reduction=reduction, name=name, dtype=dtype, alpha=alpha, beta=beta, axis=axis)
        self.alpha, self.beta, self.axis = alpha, beta, axis

    def get_config(self):
        """Name, reduction, alpha, beta and axis."""
        return {"name": self.name, "reduction": self.reduction, "alpha": self.alpha, "beta": self.beta,
                "axis": self.axis}
