"""Focal cross-entropies (Lin et al., 2018): cross-entropy scaled by how
wrong the prediction is, so that easy examples weigh less.

Both follow Keras 3 step for step, so that values match it: the binary one
is the element-wise binary cross-entropy (through the stable logits path
when ``from_logits=True`` or when ``y_pred`` came from a sigmoid, as Keras's
TensorFlow backend does) times ``(1 - p_t) ** gamma``; the categorical one
renormalizes and clips the probabilities (after a softmax when
``from_logits=True``) and scales ``-y log p`` by ``alpha * (1 - p) ** gamma``.
"""
import warnings

import numpy

from minikeras import ops
from minikeras.autograd import Tensor
from minikeras.losses.crossentropy import (
    _binary_log_loss, _categorical_pair, _logits_or_none, _matched_binary_pair, _normalized_probabilities,
)
from minikeras.losses.loss import LossFunctionWrapper, as_prediction, as_target, checks_inputs, reshaped
from minikeras._support.argument_validation import validate_number


def _label_smoothing(owner, value):
    return validate_number(owner, "label_smoothing", value, 0.0, 1.0)


@checks_inputs
def binary_focal_crossentropy(y_true, y_pred, apply_class_balancing=False, alpha=0.25, gamma=2.0,
                              from_logits=False, label_smoothing=0.0, axis=-1):
    """Per-sample binary focal cross-entropy: the mean over ``axis`` of
    ``(1 - p_t) ** gamma * bce``, with ``p_t = y p + (1 - y)(1 - p)``.

    Args:
        y_true: targets in [0, 1], of ``y_pred``'s shape.
        y_pred: probabilities, or logits with ``from_logits=True``.
        apply_class_balancing: weigh class 1 by ``alpha`` and class 0 by
            ``1 - alpha``.
        alpha: the class-1 weight of the balancing (default 0.25).
        gamma: the focusing exponent (0 gives plain binary cross-entropy).
        from_logits: whether ``y_pred`` holds logits.
        label_smoothing: in [0, 1]; targets become ``y (1 - ls) + ls / 2``.
        axis: the axis to average over.

    Returns:
        A Tensor of ``y_pred``'s shape without ``axis``.

    Example:
        >>> binary_focal_crossentropy([[0, 1], [0, 0]], minikeras.tensor([[0.6, 0.4], [0.4, 0.6]])).numpy()
        array([0.32986, 0.20579], dtype=float32)
    """
    name = "binary_focal_crossentropy"
    y_pred = as_prediction(y_pred)
    logits = _logits_or_none(y_pred, from_logits, "sigmoid", name)
    y_true, y_pred, pred_shape = _matched_binary_pair(name, as_target(y_true, y_pred), y_pred)
    if label_smoothing:
        y_true = y_true * (1.0 - label_smoothing) + 0.5 * label_smoothing
    if logits is not None:
        logits = reshaped(logits, pred_shape)
        probabilities = ops.sigmoid(logits)
        bce = ops.sigmoid_cross_entropy(logits, y_true)
    else:
        probabilities = y_pred
        bce = _binary_log_loss(y_true, y_pred)
    p_t = y_true * probabilities + (1.0 - y_true) * (1.0 - probabilities)
    focal = ops.power(1.0 - p_t, gamma) * bce
    if apply_class_balancing:
        focal = (y_true * alpha + (1.0 - y_true) * (1.0 - alpha)) * focal
    return ops.mean(focal, axis=axis)


def _alpha_tensor(alpha, like):
    """A scalar alpha stays a number; a per-class list becomes a constant
    Tensor on ``like``'s device (broadcast along the last axis, as Keras)."""
    if isinstance(alpha, (list, tuple, numpy.ndarray)):
        return Tensor(numpy.asarray(alpha, dtype=like.dtype), device=like.device)
    return alpha


@checks_inputs
def categorical_focal_crossentropy(y_true, y_pred, alpha=0.25, gamma=2.0, from_logits=False, label_smoothing=0.0,
                                   axis=-1):
    """Per-sample categorical focal cross-entropy:
    ``sum(alpha * (1 - p) ** gamma * -y log p, axis)``.

    Args:
        y_true: one-hot (or probability) targets, of ``y_pred``'s shape.
        y_pred: probabilities (renormalized to sum 1, clipped to
            ``[1e-7, 1 - 1e-7]``), or logits with ``from_logits=True``.
        alpha: a weight for every class (a float, or a list with one per class).
        gamma: the focusing exponent (0 gives ``alpha`` times categorical
            cross-entropy).
        from_logits: whether ``y_pred`` holds logits.
        label_smoothing: in [0, 1]; targets become ``y (1 - ls) + ls / classes``.
        axis: the class axis.

    Returns:
        A Tensor of ``y_pred``'s shape without ``axis``.
    """
    name = "categorical_focal_crossentropy"
    y_true, y_pred = _categorical_pair(name, y_true, y_pred, axis)
    if y_pred.shape[-1] == 1:
        warnings.warn(
            f"In loss {name}, expected y_pred.shape to be (batch_size, num_classes) with num_classes > 1. "
            f"Received: y_pred.shape={tuple(y_pred.shape)}. Consider using 'binary_crossentropy' if you only "
            "have 2 classes.", SyntaxWarning, stacklevel=2,
        )
    if label_smoothing:
        y_true = y_true * (1.0 - label_smoothing) + label_smoothing / y_true.shape[-1]
    if from_logits:
        y_pred = ops.softmax(y_pred, axis=axis)
    output = _normalized_probabilities(y_pred, axis)
    cross_entropy = -y_true * ops.log(output)
    focal = ops.power(1.0 - output, gamma) * _alpha_tensor(alpha, output) * cross_entropy
    return ops.sum(focal, axis=axis)


class BinaryFocalCrossentropy(LossFunctionWrapper):
    """Binary focal cross-entropy (``binary_focal_crossentropy``), reduced.

    Args:
        apply_class_balancing: weigh class 1 by ``alpha``, class 0 by ``1 - alpha``.
        alpha: default 0.25.
        gamma: default 2.0.
        from_logits: whether ``y_pred`` holds logits (default False).
        label_smoothing: in [0, 1] (default 0).
        axis: the axis to average over (default -1).
        reduction: see ``Loss`` (default ``"sum_over_batch_size"``).
        name: default ``"binary_focal_crossentropy"``.
        dtype: kept for Keras compatibility.
    """

    def __init__(self, apply_class_balancing=False, alpha=0.25, gamma=2.0, from_logits=False, label_smoothing=0.0,
                 axis=-1, reduction="sum_over_batch_size", name="binary_focal_crossentropy", dtype=None):
        label_smoothing = _label_smoothing(type(self).__name__, label_smoothing)
        super().__init__(binary_focal_crossentropy, reduction=reduction, name=name, dtype=dtype,
                         apply_class_balancing=apply_class_balancing, alpha=alpha, gamma=gamma,
                         from_logits=from_logits, label_smoothing=label_smoothing, axis=axis)
        self.apply_class_balancing, self.alpha, self.gamma = apply_class_balancing, alpha, gamma
        self.from_logits, self.label_smoothing, self.axis = from_logits, label_smoothing, axis

    def get_config(self):
        """Keras's keys: name, reduction, from_logits, label_smoothing, axis,
        apply_class_balancing, alpha, gamma."""
        return {"name": self.name, "reduction": self.reduction, "from_logits": self.from_logits,
                "label_smoothing": self.label_smoothing, "axis": self.axis,
                "apply_class_balancing": self.apply_class_balancing, "alpha": self.alpha, "gamma": self.gamma}


class CategoricalFocalCrossentropy(LossFunctionWrapper):
    """Categorical focal cross-entropy (``categorical_focal_crossentropy``), reduced.

    Args:
        alpha: a float or one weight per class (default 0.25).
        gamma: default 2.0.
        from_logits: whether ``y_pred`` holds logits (default False).
        label_smoothing: in [0, 1] (default 0).
        axis: the class axis (default -1).
        reduction: see ``Loss`` (default ``"sum_over_batch_size"``).
        name: default ``"categorical_focal_crossentropy"``.
        dtype: kept for Keras compatibility.
    """

    def __init__(self, alpha=0.25, gamma=2.0, from_logits=False, label_smoothing=0.0, axis=-1,
                 reduction="sum_over_batch_size", name="categorical_focal_crossentropy", dtype=None):
        label_smoothing = _label_smoothing(type(self).__name__, label_smoothing)
        super().__init__(categorical_focal_crossentropy, reduction=reduction, name=name, dtype=dtype, alpha=alpha,
                         gamma=gamma, from_logits=from_logits, label_smoothing=label_smoothing, axis=axis)
        self.alpha, self.gamma = alpha, gamma
        self.from_logits, self.label_smoothing, self.axis = from_logits, label_smoothing, axis

    def get_config(self):
        """Keras's keys: name, reduction, from_logits, label_smoothing, axis, alpha, gamma."""
        return {"name": self.name, "reduction": self.reduction, "from_logits": self.from_logits,
                "label_smoothing": self.label_smoothing, "axis": self.axis, "alpha": self.alpha,
                "gamma": self.gamma}
