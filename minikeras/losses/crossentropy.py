"""Cross-entropy losses: categorical, sparse categorical and binary.

From logits they use the fused ops (``ops.softmax_cross_entropy``,
``ops.sparse_softmax_cross_entropy``, ``ops.sigmoid_cross_entropy``): one
graph node, finite for any logit size. From probabilities they clip to
``[epsilon, 1 - epsilon]`` as Keras does. And, as tf.keras does, when
``y_pred`` is the output of a softmax or sigmoid activation that carries its
logits (``minikeras.losses.logits``), the logits path is taken instead, so that
a softmax output layer trains as stably as ``from_logits=True``.
"""
import warnings

import numpy

from minikeras import backend, ops
from minikeras.autograd import Tensor
from minikeras.backend.dtypes import is_float_dtype
from minikeras.kernels.reductions import MEAN_MAX_ROWS
from minikeras.ops.nn.softmax import SparseSoftmaxCrossEntropy
from minikeras.ops.nn.softmax_cross_entropy_mean import FUSED_DTYPES, fusable, sparse_softmax_cross_entropy_mean
from minikeras.losses.logits import logits_of
from minikeras.losses.loss import (
    EPSILON, LossFunctionWrapper, as_prediction, as_target, check_same_shape, checks_inputs, matched_shapes,
    reshaped,
)
from minikeras._support import deferred_checks
from minikeras._support.argument_validation import validate_number


def attached_logits(y_pred, activation):
    """The logits behind ``y_pred`` when it is the output of ``activation``.

    Layers attach them with ``minikeras.losses.logits.attach_logits`` (a
    Tensor, or a tuple ``(logits, "softmax"|"sigmoid")``). For a bare Tensor, the op that made
    ``y_pred`` tells the activation when it was recorded, so that a softmax
    output never goes through a sigmoid cross-entropy nor the reverse;
    otherwise the attached logits are trusted, as tf.keras does.
    """
    logits = logits_of(y_pred)
    if logits is None:
        return None
    if isinstance(logits, tuple):
        logits, kind = logits[0], logits[1]
    else:
        kind = _producer_activation(y_pred)
    if kind is not None and kind != activation:
        return None
    if not isinstance(logits, Tensor) or logits.shape != y_pred.shape:
        return None
    return logits


def _producer_activation(tensor):
    node = getattr(tensor, "_node", None)
    if node is None:
        return None
    name = type(node).__name__.lower()
    for kind in ("softmax", "sigmoid"):
        if kind in name:
            return kind
    return None


def _logits_or_none(y_pred, from_logits, activation, name):
    attached = attached_logits(y_pred, activation)
    if from_logits:
        if attached is not None:
            warnings.warn(
                f"{name} received from_logits=True, but y_pred was produced by a {activation} activation and "
                "thus does not represent logits; using the logits behind it.",
                stacklevel=3,
            )
            return attached
        return y_pred
    return attached


def _is_last_axis(axis, ndim):
    return axis == -1 or axis == ndim - 1


def _categorical_pair(name, y_true, y_pred, axis):
    """Check ``axis`` and return ``(y_true, y_pred)`` as Tensors of one shape
    with a class axis: the inputs of the categorical (focal) cross-entropies."""
    if isinstance(axis, bool) or not isinstance(axis, (int, numpy.integer)):
        raise ValueError(f"{name}: axis must be an int, received {axis!r}.")
    y_pred = as_prediction(y_pred)
    y_true = as_target(y_true, y_pred)
    check_same_shape(name, y_true, y_pred)
    if y_pred.ndim < 1:
        raise ValueError(f"{name}: y_pred must have a class axis, received shape {y_pred.shape}.")
    return y_true, y_pred


def _normalized_probabilities(y_pred, axis):
    """``y_pred`` renormalized to sum 1 along ``axis``, clipped to ``[EPSILON, 1 - EPSILON]``."""
    probabilities = y_pred / ops.sum(y_pred, axis=axis, keepdims=True)
    return ops.clip(probabilities, EPSILON, 1.0 - EPSILON)


def _matched_binary_pair(name, y_true, y_pred):
    """``(y_true, y_pred, pred_shape)``: ``(N,)`` labels meet ``(N, 1)``
    predictions (and the reverse), then the shapes must agree."""
    received = (y_true.shape, y_pred.shape)
    true_shape, pred_shape = matched_shapes(*received)
    y_true, y_pred = reshaped(y_true, true_shape), reshaped(y_pred, pred_shape)
    check_same_shape(name, y_true, y_pred, received)
    return y_true, y_pred, pred_shape


def _binary_log_loss(y_true, y_pred):
    """Elementwise ``-(y log p + (1 - y) log(1 - p))`` on probabilities clipped to ``[EPSILON, 1 - EPSILON]``."""
    probabilities = ops.clip(y_pred, EPSILON, 1.0 - EPSILON)
    return -(y_true * ops.log(probabilities) + (1.0 - y_true) * ops.log(1.0 - probabilities))


@checks_inputs
def categorical_crossentropy(y_true, y_pred, from_logits=False, label_smoothing=0.0, axis=-1):
    """Per-sample categorical cross-entropy ``-sum(y_true * log(p), axis)``.

    Args:
        y_true: one-hot (or probability) targets, same shape as ``y_pred``.
        y_pred: probabilities (clipped to ``[1e-7, 1 - 1e-7]`` after
            renormalizing to sum 1), or logits with ``from_logits=True``.
        from_logits: whether ``y_pred`` holds logits.
        label_smoothing: in [0, 1]; targets become
            ``y_true * (1 - ls) + ls / num_classes``.
        axis: the class axis.

    Returns:
        A Tensor of ``y_pred``'s shape without ``axis``.

    Example:
        >>> y_true = [[0, 1, 0], [0, 0, 1]]
        >>> y_pred = minikeras.tensor([[0.05, 0.95, 0], [0.1, 0.8, 0.1]])
        >>> categorical_crossentropy(y_true, y_pred).numpy()
        array([0.05129331, 2.3025851 ], dtype=float32)
    """
    name = "categorical_crossentropy"
    y_true, y_pred = _categorical_pair(name, y_true, y_pred, axis)
    if label_smoothing:
        classes = y_pred.shape[axis]
        y_true = y_true * (1.0 - label_smoothing) + label_smoothing / classes
    logits = _logits_or_none(y_pred, from_logits, "softmax", name)
    if logits is not None and (from_logits or _is_last_axis(axis, y_pred.ndim)):
        return ops.softmax_cross_entropy(logits, y_true, axis=axis)
    probabilities = _normalized_probabilities(y_pred, axis)
    return -ops.sum(y_true * ops.log(probabilities), axis=axis)


def _integer_labels(name, y_true, y_pred, axis):
    """Labels as an integer array of y_pred's shape without ``axis``, on
    y_pred's device (a trailing or ``axis`` size-1 axis is dropped)."""
    if isinstance(y_true, Tensor):
        with y_true.device.activate():
            return _integer_label_array(name, y_true.data, y_pred, axis)
    return _integer_label_array(name, y_true, y_pred, axis)


def _integer_label_array(name, data, y_pred, axis):
    if not backend.is_array(data):
        data = numpy.asarray(data)
    if is_float_dtype(data.dtype):
        data = data.astype(numpy.int64)  # Keras accepts float class ids
    elif data.dtype.kind not in "iub":
        raise TypeError(f"{name}: y_true must hold integer class ids, received dtype {data.dtype}.")
    pred_shape = tuple(y_pred.shape)
    axis = axis % len(pred_shape)
    expected = pred_shape[:axis] + pred_shape[axis + 1:]
    if data.ndim == len(pred_shape) and data.shape[axis] == 1:
        data = data.reshape(data.shape[:axis] + data.shape[axis + 1:])
    if tuple(data.shape) != expected:
        raise ValueError(
            f"{name}: y_true of shape {tuple(data.shape)} must have shape {expected} (y_pred's shape "
            f"{pred_shape} without the class axis, or with a size-1 class axis)."
        )
    return data


def _labels_checked(name, labels, classes, device):
    """Check the label range now when the labels are still on the host
    (before the upload: no device round trip in the training step), or defer
    it in a GPU training step (checked when the logs are read: no host sync).
    False when neither applies: the op checks it (one device round trip)."""
    if isinstance(labels, numpy.ndarray):
        _check_label_range(name, labels, classes, device)
        return True
    if deferred_checks.active() and not device.host_kernels:
        deferred_checks.defer_label_range(name, device, labels, classes)
        return True
    return False


def _sparse_logits_losses(name, logits, labels, classes):
    """Per-sample cross-entropy of last-axis ``logits`` and integer ``labels`` (one fused op)."""
    if _labels_checked(name, labels, classes, logits.device):
        return SparseSoftmaxCrossEntropy(labels_checked=True).apply(logits, Tensor(labels, device=logits.device))
    return ops.sparse_softmax_cross_entropy(logits, Tensor(labels, device=logits.device))


def sparse_categorical_crossentropy_mean(y_true, y_pred, from_logits):
    """The batch mean of ``sparse_categorical_crossentropy`` (class axis
    last, no ignored class) as one fused op, or None where that op does not
    apply (see ``ops.nn.softmax_cross_entropy_mean.fusable``; then the
    per-sample losses and their mean give the same value)."""
    name = "sparse_categorical_crossentropy"
    y_pred = as_prediction(y_pred)
    if y_pred.ndim != 2 or not 0 < y_pred.shape[0] <= MEAN_MAX_ROWS or y_pred.dtype not in FUSED_DTYPES:
        return None
    labels = _integer_labels(name, y_true, y_pred, -1)
    logits = _logits_or_none(y_pred, from_logits, "softmax", name)
    if logits is None:
        return None
    classes = y_pred.shape[-1]
    if not fusable(logits, labels):  # e.g. float16 logits behind a float32 softmax
        return ops.mean(_sparse_logits_losses(name, logits, labels, classes))
    checked = _labels_checked(name, labels, classes, logits.device)
    return sparse_softmax_cross_entropy_mean(logits, Tensor(labels, device=logits.device), labels_checked=checked)


def _check_label_range(name, labels, classes, device):
    """Checked on the host when the labels are still there (before upload),
    else on the device in one transfer."""
    if labels.size == 0:
        return
    low, high = (int(labels.min()), int(labels.max())) if isinstance(labels, numpy.ndarray) else device.bounds(labels)
    if low < 0 or high >= classes:
        raise ValueError(
            f"{name}: labels must be class ids in [0, {classes}) for y_pred with {classes} classes; received "
            f"label {low if low < 0 else high}."
        )


def sparse_categorical_crossentropy_with_mask(y_true, y_pred, from_logits=False, ignore_class=None, axis=-1):
    """``sparse_categorical_crossentropy`` and its validity mask.

    Returns:
        ``(losses, mask)``: mask is None without ``ignore_class``, else a
        boolean array, False where the label is ``ignore_class`` (those
        losses are 0).
    """
    name = "sparse_categorical_crossentropy"
    y_pred = as_prediction(y_pred)
    if y_pred.ndim < 1:
        raise ValueError(f"{name}: y_pred must have a class axis, received shape {y_pred.shape}.")
    labels = _integer_labels(name, y_true, y_pred, axis)
    classes = y_pred.shape[axis]
    device = y_pred.device
    valid = None
    if ignore_class is not None:
        with device.activate():
            valid = labels != ignore_class
            labels = labels * valid  # ignored entries become class 0; their loss is zeroed below
    logits = _logits_or_none(y_pred, from_logits, "softmax", name)
    last_axis = _is_last_axis(axis, y_pred.ndim)
    if logits is not None and (from_logits or last_axis):
        if not last_axis:
            logits = ops.moveaxis(logits, axis, -1)
        losses = _sparse_logits_losses(name, logits, labels, classes)
    else:
        _check_label_range(name, labels, classes, device)
        xp = device.xp
        with device.activate():
            device_labels = device.asarray(labels)
            one_hot = (device_labels[..., None] == xp.arange(classes)).astype(y_pred.dtype)
            if not last_axis:
                one_hot = xp.moveaxis(one_hot, -1, axis)
        # Keras clips first and renormalizes after (its backends take the
        # log of the clipped probabilities as logits), so an all-zero row
        # is a uniform guess with a finite loss, log(classes), not 0/0.
        probabilities = ops.clip(y_pred, EPSILON, 1.0 - EPSILON)
        probabilities = probabilities / ops.sum(probabilities, axis=axis, keepdims=True)
        losses = -ops.sum(ops.log(probabilities) * one_hot, axis=axis)
    if valid is not None:
        with device.activate():
            valid = device.asarray(valid).astype(losses.dtype)
        losses = losses * valid
    return losses, valid


@checks_inputs
def sparse_categorical_crossentropy(y_true, y_pred, from_logits=False, ignore_class=None, axis=-1):
    """Per-sample categorical cross-entropy for integer class ids.

    Args:
        y_true: class ids of shape ``y_pred.shape`` without ``axis`` (or
            with a size-1 axis there, like ``(N, 1)``); floats are accepted.
        y_pred: probabilities, or logits with ``from_logits=True``.
        from_logits: whether ``y_pred`` holds logits.
        ignore_class: a class id whose entries get loss 0 (e.g. a padding
            or "void" class); the Loss class then averages over the rest.
        axis: the class axis.

    Returns:
        A Tensor of ``y_pred``'s shape without ``axis``.

    Raises:
        ValueError: shapes disagree, or a label is outside ``[0, classes)``.

    Example:
        >>> y_pred = minikeras.tensor([[0.05, 0.95, 0], [0.1, 0.8, 0.1]])
        >>> sparse_categorical_crossentropy([1, 2], y_pred).numpy()
        array([0.05129331, 2.3025851 ], dtype=float32)
    """
    return sparse_categorical_crossentropy_with_mask(y_true, y_pred, from_logits, ignore_class, axis)[0]


@checks_inputs
def binary_crossentropy(y_true, y_pred, from_logits=False, label_smoothing=0.0, axis=-1):
    """Per-sample binary cross-entropy, the mean over ``axis`` of
    ``-(y log p + (1 - y) log(1 - p))``.

    Args:
        y_true: targets in [0, 1], shape of ``y_pred`` (``(N,)`` labels meet
            ``(N, 1)`` predictions).
        y_pred: probabilities (clipped to ``[1e-7, 1 - 1e-7]``), or logits
            with ``from_logits=True``.
        from_logits: whether ``y_pred`` holds logits.
        label_smoothing: in [0, 1]; targets become ``y * (1 - ls) + 0.5 * ls``.
        axis: the axis to average over.

    Returns:
        A Tensor of ``y_pred``'s shape without ``axis``.

    Example:
        >>> y_pred = minikeras.tensor([[0.6, 0.4], [0.4, 0.6]])
        >>> binary_crossentropy([[0, 1], [0, 0]], y_pred).numpy()
        array([0.91629076, 0.7135582 ], dtype=float32)
    """
    name = "binary_crossentropy"
    y_pred = as_prediction(y_pred)
    y_true = as_target(y_true, y_pred)
    logits = _logits_or_none(y_pred, from_logits, "sigmoid", name)
    y_true, y_pred, pred_shape = _matched_binary_pair(name, y_true, y_pred)
    if label_smoothing:
        y_true = y_true * (1.0 - label_smoothing) + 0.5 * label_smoothing
    if logits is not None:
        elementwise = ops.sigmoid_cross_entropy(reshaped(logits, pred_shape), y_true)
    else:
        elementwise = _binary_log_loss(y_true, y_pred)
    return ops.mean(elementwise, axis=axis)


class CategoricalCrossentropy(LossFunctionWrapper):
    """Cross-entropy between one-hot labels and predicted class probabilities.

    Args:
        from_logits: whether ``y_pred`` holds logits (default False).
        label_smoothing: in [0, 1] (default 0).
        axis: the class axis (default -1).
        reduction: see ``Loss`` (default ``"sum_over_batch_size"``).
        name: default ``"categorical_crossentropy"``.
        dtype: kept for Keras compatibility.
    """

    def __init__(self, from_logits=False, label_smoothing=0.0, axis=-1, reduction="sum_over_batch_size",
                 name="categorical_crossentropy", dtype=None):
        label_smoothing = validate_number(type(self).__name__, "label_smoothing", label_smoothing, 0.0, 1.0)
        super().__init__(categorical_crossentropy, reduction=reduction, name=name, dtype=dtype,
                         from_logits=from_logits, label_smoothing=label_smoothing, axis=axis)
        self.from_logits, self.label_smoothing, self.axis = from_logits, label_smoothing, axis

    def get_config(self):
        """Name, reduction, from_logits, label_smoothing and axis."""
        return {"name": self.name, "reduction": self.reduction, "from_logits": self.from_logits,
                "label_smoothing": self.label_smoothing, "axis": self.axis}


class SparseCategoricalCrossentropy(LossFunctionWrapper):
    """Cross-entropy between integer labels and predicted class probabilities.

    Args:
        from_logits: whether ``y_pred`` holds logits (default False).
        ignore_class: a class id to leave out of the loss (default None);
            the mean is then over the other entries.
        reduction: see ``Loss`` (default ``"sum_over_batch_size"``).
        axis: the class axis (default -1).
        name: default ``"sparse_categorical_crossentropy"``.
        dtype: kept for Keras compatibility.
    """

    def __init__(self, from_logits=False, ignore_class=None, reduction="sum_over_batch_size", axis=-1,
                 name="sparse_categorical_crossentropy", dtype=None):
        super().__init__(sparse_categorical_crossentropy, reduction=reduction, name=name, dtype=dtype,
                         from_logits=from_logits, ignore_class=ignore_class, axis=axis)
        self.from_logits, self.ignore_class, self.axis = from_logits, ignore_class, axis

    def _fused_mean(self, y_true, y_pred):
        """The mean loss as one fused op (one kernel launch on a GPU for
        forward and backward together) when the class axis is last and no
        class is ignored; None otherwise."""
        if self.ignore_class is not None or not _is_last_axis(self.axis, len(getattr(y_pred, "shape", ()))):
            return None
        cls = type(self)
        if cls.call_with_mask is not SparseCategoricalCrossentropy.call_with_mask \
                or cls.call is not LossFunctionWrapper.call:
            return None  # a subclass that computes its own per-sample losses gets them averaged as they are
        return sparse_categorical_crossentropy_mean(y_true, y_pred, self.from_logits)

    def call_with_mask(self, y_true, y_pred):
        """Per-sample losses and the ``ignore_class`` mask."""
        return sparse_categorical_crossentropy_with_mask(y_true, y_pred, self.from_logits, self.ignore_class,
                                                         self.axis)

    def get_config(self):
        """Name, reduction, from_logits, ignore_class and axis."""
        return {"name": self.name, "reduction": self.reduction, "from_logits": self.from_logits,
                "ignore_class": self.ignore_class, "axis": self.axis}


class BinaryCrossentropy(LossFunctionWrapper):
    """Cross-entropy between binary labels and predicted probabilities.

    Args:
        from_logits: whether ``y_pred`` holds logits (default False).
        label_smoothing: in [0, 1] (default 0).
        axis: the axis to average over (default -1).
        reduction: see ``Loss`` (default ``"sum_over_batch_size"``).
        name: default ``"binary_crossentropy"``.
        dtype: kept for Keras compatibility.
    """

    def __init__(self, from_logits=False, label_smoothing=0.0, axis=-1, reduction="sum_over_batch_size",
                 name="binary_crossentropy", dtype=None):
        label_smoothing = validate_number(type(self).__name__, "label_smoothing", label_smoothing, 0.0, 1.0)
        super().__init__(binary_crossentropy, reduction=reduction, name=name, dtype=dtype,
                         from_logits=from_logits, label_smoothing=label_smoothing, axis=axis)
        self.from_logits, self.label_smoothing, self.axis = from_logits, label_smoothing, axis

    def get_config(self):
        """Name, reduction, from_logits, label_smoothing and axis."""
        return {"name": self.name, "reduction": self.reduction, "from_logits": self.from_logits,
                "label_smoothing": self.label_smoothing, "axis": self.axis}
