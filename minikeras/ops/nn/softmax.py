"""Softmax, log-softmax and the fused cross-entropies the losses use.

Each cross-entropy is one Function: its forward computes the per-sample loss
in one pass from the logits (shifted by their maximum, so large logits do
not overflow) and keeps only what its closed-form gradient needs, instead of
recording softmax, log, multiply and sum as separate graph nodes.
"""

__all__ = ["softmax", "log_softmax", "softmax_cross_entropy", "sparse_softmax_cross_entropy", "sigmoid_cross_entropy"]

import numpy

from minikeras import kernels
from minikeras.backend.dtypes import is_float_dtype
from minikeras.autograd import Function
from minikeras.ops._checks import check_broadcast, normalize_axis, shape_of
from minikeras._support.argument_validation import is_int, validate_tensor_input


def _shifted(x, axes):
    """``x - max(x)`` over ``axes`` (every entry <= 0, so exp cannot overflow); an empty ``x`` as it is."""
    return x - x.max(axis=axes, keepdims=True) if x.size else x.copy()


def _float_dtype_of(op_name, x):
    dtype = getattr(x, "dtype", None)
    if dtype is not None and not is_float_dtype(dtype):
        raise TypeError(f"{op_name} expects floating-point logits, received dtype {dtype}.")


class Softmax(Function):
    """Softmax over some axes; keeps only its output for backward."""

    def __init__(self, axes):
        self.axes = axes

    def forward(self, x):
        xp = self.device.xp
        out = xp.exp(_shifted(x, self.axes))
        out /= out.sum(axis=self.axes, keepdims=True)
        self.save_for_backward(out)
        return out

    def backward(self, grad):
        (out,) = self.saved
        grad_input = grad * out
        # d softmax: out * (grad - sum(grad * out))
        grad_input -= out * grad_input.sum(axis=self.axes, keepdims=True)
        return grad_input


class LogSoftmax(Function):
    """Log-softmax over some axes; keeps only its output for backward."""

    def __init__(self, axes):
        self.axes = axes

    def forward(self, x):
        xp = self.device.xp
        out = _shifted(x, self.axes)
        if out.size:
            out -= xp.log(xp.exp(out).sum(axis=self.axes, keepdims=True))
        self.save_for_backward(out)
        return out

    def backward(self, grad):
        (out,) = self.saved
        xp = self.device.xp
        grad_input = xp.exp(out)
        grad_input *= -grad.sum(axis=self.axes, keepdims=True)
        grad_input += grad
        return grad_input


def _normalized_axes(op_name, x, axis, allow_empty=False):
    """Check a softmax input and axis; the axes as a tuple.

    Raises:
        TypeError: ``x`` is not floating-point numeric data.
        ValueError: an axis is out of range, or has size 0 where
            ``allow_empty`` is False (a cross-entropy over no classes).
    """
    validate_tensor_input(op_name, x, allow_bool=False, allow_complex=False)
    _float_dtype_of(op_name, x)
    shape = shape_of(x)
    axes = normalize_axis(op_name, axis, len(shape))
    for index in axes:
        if shape[index] == 0 and not allow_empty:
            raise ValueError(f"{op_name}: cannot normalize over axis {index} of size 0 (input shape {shape}).")
    return axes


def softmax(x, axis=-1):
    """``exp(x) / sum(exp(x))`` over ``axis`` (an int or a tuple), computed stably (an empty axis gives an
    empty result, as Keras)."""
    return Softmax(_normalized_axes("softmax", x, axis, allow_empty=True)).apply(x)


def log_softmax(x, axis=-1):
    """``x - logsumexp(x)`` over ``axis``: finite even for logits like 1000 or -1000."""
    return LogSoftmax(_normalized_axes("log_softmax", x, axis, allow_empty=True)).apply(x)


# ------------------------------------------------------------ cross-entropies
class SoftmaxCrossEntropy(Function):
    """Per-sample ``-sum(labels * log_softmax(logits))`` over one axis.

    With ``t = sum(labels)`` over the axis, the gradient with respect to the
    logits is ``softmax * t - labels`` (``softmax - labels`` for one-hot or
    probability labels), and with respect to the labels ``-log_softmax``.
    """

    def __init__(self, axis):
        self.axis = axis

    def forward(self, logits, labels):
        xp = self.device.xp
        axis = self.axis
        self.labels_dtype = labels.dtype
        if labels.dtype != logits.dtype:
            labels = labels.astype(logits.dtype)  # float64 or int labels must not upcast the loss
        shifted = _shifted(logits, axis)
        exp = xp.exp(shifted)
        total = exp.sum(axis=axis, keepdims=True)
        log_total = xp.log(total)
        label_sum = labels.sum(axis=axis, keepdims=True)
        # -sum(z * (shifted - log_total)) without building log_softmax twice.
        loss = label_sum * log_total
        loss -= (labels * shifted).sum(axis=axis, keepdims=True)
        needs_logits, needs_labels = self.needs_input_grad
        probabilities = log_probabilities = None
        if needs_logits:
            exp /= total
            probabilities = exp
        if needs_labels:
            shifted -= log_total
            log_probabilities = shifted
        self.save_for_backward(
            probabilities, labels if needs_logits else None, label_sum if needs_logits else None, log_probabilities
        )
        return xp.squeeze(loss, axis=axis)

    def backward(self, grad):
        probabilities, labels, label_sum, log_probabilities = self.saved
        grad = self.device.xp.expand_dims(grad, self.axis)
        grad_logits = grad_labels = None
        if probabilities is not None:
            grad_logits = probabilities * (grad * label_sum)
            grad_logits -= labels * grad
        if log_probabilities is not None:
            grad_labels = log_probabilities * -grad
            if grad_labels.dtype != self.labels_dtype:
                grad_labels = grad_labels.astype(self.labels_dtype)
        return grad_logits, grad_labels


class SparseSoftmaxCrossEntropy(Function):
    """Per-sample ``-log_softmax(logits)[label]`` for integer labels; the
    gradient with respect to the logits is ``softmax - one_hot(label)``.

    Args:
        labels_checked: the caller checked the label range already (on the
            host, before the upload): no device round trip for it here.
    """

    def __init__(self, labels_checked=False):
        self.labels_checked = labels_checked

    def forward(self, logits, labels):
        xp = self.device.xp
        classes = logits.shape[-1]
        labels = labels.reshape(-1)
        if labels.dtype != numpy.int64:
            # Keras accepts float class ids; the fused kernels read int64 (one cast, kept for backward).
            labels = labels.astype(numpy.int64)
        if not self.labels_checked:
            _check_labels(self.device, labels, classes)
        flat = logits.reshape(-1, classes)
        needs_grad = self.needs_input_grad[0]
        # One fused kernel on a GPU (minikeras.kernels.reductions).
        loss, probabilities = kernels.get("sparse_softmax_cross_entropy", self.device)(flat, labels, needs_grad)
        if needs_grad:
            self.save_for_backward(probabilities, labels)
        self.logits_shape = logits.shape
        return loss.reshape(logits.shape[:-1])

    def backward(self, grad):
        probabilities, labels = self.saved
        grad_logits = kernels.get("sparse_softmax_cross_entropy_backward", self.device)(
            probabilities, labels, grad.reshape(-1))
        return grad_logits.reshape(self.logits_shape), None


def _check_labels(device, labels, classes):
    if labels.size == 0:
        return
    low, high = device.bounds(labels)  # one transfer for both bounds
    if low < 0 or high >= classes:
        bad = low if low < 0 else high
        raise ValueError(
            f"sparse_softmax_cross_entropy: labels must be class ids in [0, {classes}) for logits with {classes} "
            f"classes; received label {bad}."
        )


class SigmoidCrossEntropy(Function):
    """Elementwise ``max(x, 0) - x * z + log1p(exp(-|x|))``, the stable form of
    ``-z log sigmoid(x) - (1 - z) log(1 - sigmoid(x))``; gradient ``sigmoid(x) - z``."""

    def forward(self, logits, labels):
        xp = self.device.xp
        self.labels_dtype = labels.dtype
        if labels.dtype != logits.dtype:
            labels = labels.astype(logits.dtype)
        exp_negative_abs = xp.exp(-xp.abs(logits))
        loss = xp.maximum(logits, 0)
        loss -= logits * labels
        loss += xp.log1p(exp_negative_abs)
        needs_logits, needs_labels = self.needs_input_grad
        sigmoid = None
        if needs_logits:
            # sigmoid(x) = 1 / (1 + e^-|x|) for x >= 0, e^-|x| / (1 + e^-|x|) otherwise
            sigmoid = xp.where(logits >= 0, 1, exp_negative_abs).astype(logits.dtype, copy=False)
            sigmoid /= 1 + exp_negative_abs
        self.save_for_backward(sigmoid, labels if needs_logits else None, logits if needs_labels else None)
        return loss

    def backward(self, grad):
        sigmoid, labels, logits = self.saved
        grad_logits = grad_labels = None
        if sigmoid is not None:
            grad_logits = sigmoid - labels
            grad_logits *= grad
        if logits is not None:
            grad_labels = logits * -grad
            if grad_labels.dtype != self.labels_dtype:
                grad_labels = grad_labels.astype(self.labels_dtype)
        return grad_logits, grad_labels


def _check_pair(op_name, logits, labels):
    validate_tensor_input(op_name, logits, allow_bool=False, allow_complex=False)
    validate_tensor_input(op_name, labels, allow_complex=False)
    _float_dtype_of(op_name, logits)
    if not hasattr(labels, "shape"):
        raise TypeError(f"{op_name}: labels must be a Tensor or an array, received {type(labels).__name__}.")


def softmax_cross_entropy(logits, labels, axis=-1):
    """Per-sample cross-entropy ``-sum(labels * log_softmax(logits))`` over ``axis``.

    Args:
        logits: unnormalized scores, e.g. shape ``(N, classes)``.
        labels: targets of the same shape (one-hot or probabilities; they
            need not sum to 1).
        axis: the class axis.

    Returns:
        A tensor of ``logits``' shape without ``axis``, in ``logits``' dtype.
    """
    _check_pair("softmax_cross_entropy", logits, labels)
    if shape_of(logits) != shape_of(labels):
        raise ValueError(
            f"softmax_cross_entropy: labels of shape {shape_of(labels)} must have the shape of the logits "
            f"{shape_of(logits)}."
        )
    if not is_int(axis):  # one class axis (a tuple would be several)
        raise TypeError(f"softmax_cross_entropy: axis must be an int, received {type(axis).__name__} {axis!r}.")
    (axis,) = _normalized_axes("softmax_cross_entropy", logits, axis)
    return SoftmaxCrossEntropy(axis).apply(logits, labels)


def sparse_softmax_cross_entropy(logits, labels):
    """Per-sample cross-entropy for integer class ids over the last axis.

    Args:
        logits: unnormalized scores of shape ``(..., classes)``.
        labels: class ids of shape ``logits.shape[:-1]`` (a trailing axis
            of size 1, like Keras' ``y`` of shape ``(N, 1)``, is accepted).

    Returns:
        A tensor of shape ``logits.shape[:-1]``.

    Raises:
        ValueError: the shapes disagree, or a label is outside ``[0, classes)``.
    """
    op_name = "sparse_softmax_cross_entropy"
    _check_pair(op_name, logits, labels)
    logits_shape, labels_shape = shape_of(logits), shape_of(labels)
    if not logits_shape or logits_shape[-1] == 0:
        raise ValueError(f"{op_name}: logits need a non-empty class axis, received shape {logits_shape}.")
    if labels_shape != logits_shape[:-1] and labels_shape != logits_shape[:-1] + (1,):
        raise ValueError(
            f"{op_name}: labels of shape {labels_shape} must have shape {logits_shape[:-1]} "
            f"(the logits' {logits_shape} without the class axis)."
        )
    if numpy.dtype(labels.dtype).kind not in "biu" and not is_float_dtype(labels.dtype):  # float ids, bfloat16 too
        raise TypeError(f"{op_name}: labels must be integer class ids, received dtype {labels.dtype}.")
    return SparseSoftmaxCrossEntropy().apply(logits, labels)


def sigmoid_cross_entropy(logits, labels):
    """Elementwise binary cross-entropy from logits, stable for any logit size.

    Args:
        logits: unnormalized scores.
        labels: targets in [0, 1] broadcastable to ``logits``.

    Returns:
        A tensor of the broadcast shape, in ``logits``' dtype.
    """
    _check_pair("sigmoid_cross_entropy", logits, labels)
    check_broadcast("sigmoid_cross_entropy", logits, labels)
    return SigmoidCrossEntropy().apply(logits, labels)
