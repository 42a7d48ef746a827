"""Connectionist temporal classification loss (Graves et al., 2006) as one op.

The forward pass runs the alpha recursion in log space over the label
sequence with blanks inserted (``blank, l1, blank, l2, ..., blank``), one
time step per iteration, vectorized over the batch and the extended labels;
the backward pass runs the beta recursion and returns the closed form
``softmax(logits) - occupancy / p`` (the gradient through the log-softmax
folded in), so no per-step graph is recorded. Time steps at or past a
sample's logit length get no gradient; a sample whose labels cannot fit in
its time steps gets an infinite loss and a zero gradient.

The labels within each sample's length must be class ids in
``[0, classes)``; those past it are padding, never read (as TensorFlow's
dense labels), and become the blank. The check reads the labels' bounds
back (CuPy's ``take_along_axis`` would wrap an out-of-range label silently)
or, in a GPU training step, waits for the logs' read
(``_support/deferred_checks.py``), as the cross-entropy's does.

``ctc_loss`` is ``keras.ops.ctc_loss``; the CTC loss class
(``losses/ctc.py``) calls ``_ctc_loss``. Decoding is in ``ctc_decode.py``.
"""
import numpy

from minikeras.autograd import Function, Tensor
from minikeras.backend.dtypes import is_float_dtype
from minikeras.ops.math._elementwise import operand
from minikeras.ops.math._operands import _as_tensor
from minikeras._support import deferred_checks
from minikeras._support.argument_validation import validate_int

__all__ = ["ctc_loss"]


def _log_softmax(xp, logits):
    shifted = logits - logits.max(axis=-1, keepdims=True)
    return shifted - xp.log(xp.exp(shifted).sum(axis=-1, keepdims=True))


def _extended_labels(xp, labels, blank):
    """``(B, 2L + 1)`` labels with a blank before, between and after them."""
    batch, length = labels.shape
    extended = xp.full((batch, 2 * length + 1), blank, dtype=labels.dtype)
    extended[:, 1::2] = labels
    return extended


def _skip_allowed(xp, extended, blank):
    """Where the recursion may skip the blank between two labels: a label
    slot (odd position) unlike the one two places back. A label equal to the
    blank class is still a label to emit (TensorFlow's and torch's rule:
    Keras's CTC loss pads its labels with the blank inside their length)."""
    allowed = xp.zeros(extended.shape, dtype=bool)
    allowed[:, 3::2] = extended[:, 3::2] != extended[:, 1:-2:2]
    return allowed


def _shift(xp, values, by, fill):
    """``values`` moved ``by`` places right along the last axis, ``fill`` entering."""
    out = xp.full(values.shape, fill, dtype=values.dtype)
    out[:, by:] = values[:, :-by]
    return out


class CtcLoss(Function):
    """Per-sample ``-log p(labels | logits)``; inputs: logits ``(B, T, C)``,
    integer labels ``(B, L)``, label lengths ``(B,)``, logit lengths ``(B,)``."""

    def __init__(self, blank):
        self.blank = blank

    def forward(self, logits, labels, label_length, logit_length):
        xp = self.device.xp
        batch, steps, _ = logits.shape
        log_probs = _log_softmax(xp, logits)
        extended = _extended_labels(xp, labels.astype(numpy.int64), self.blank)
        skip = _skip_allowed(xp, extended, self.blank)
        # Emission log-probabilities of every extended label at every step: (T, B, S).
        emit = xp.take_along_axis(log_probs, xp.broadcast_to(extended[:, None, :], (batch, steps, extended.shape[1])),
                                  axis=2).transpose(1, 0, 2)
        negative_infinity = -numpy.inf
        ends = 2 * label_length.astype(numpy.int64)  # the last extended index of each sample
        alpha = xp.full((steps,) + extended.shape, negative_infinity, dtype=logits.dtype)
        first = xp.full(extended.shape, negative_infinity, dtype=logits.dtype)
        first[:, 0] = emit[0, :, 0]
        first[:, 1] = xp.where(ends > 0, emit[0, :, 1], negative_infinity)
        alpha[0] = first
        active = logit_length.astype(numpy.int64)
        for step in range(1, steps):
            previous = alpha[step - 1]
            reach = xp.logaddexp(previous, _shift(xp, previous, 1, negative_infinity))
            reach = xp.where(skip, xp.logaddexp(reach, _shift(xp, previous, 2, negative_infinity)), reach)
            alpha[step] = xp.where((step < active)[:, None], reach + emit[step], previous)
        rows = xp.arange(batch)
        last = alpha[steps - 1]
        log_likelihood = xp.logaddexp(last[rows, ends], xp.where(ends > 0, last[rows, xp.maximum(ends - 1, 0)],
                                                                 negative_infinity))
        self.save_for_backward(log_probs, emit, alpha, extended, skip, ends, active, log_likelihood)
        return -log_likelihood

    def backward(self, grad):
        log_probs, emit, alpha, extended, skip, ends, active, log_likelihood = self.saved
        xp = self.device.xp
        steps, batch, width = alpha.shape
        negative_infinity = -numpy.inf
        positions = xp.arange(width)[None, :]
        at_end = (positions == ends[:, None]) | ((positions == ends[:, None] - 1) & (ends[:, None] > 0))
        skip_from = xp.zeros(skip.shape, dtype=bool)
        skip_from[:, :-2] = skip[:, 2:]  # s may be reached from s + 2 going backward
        occupancy = xp.zeros(log_probs.shape, dtype=log_probs.dtype)
        beta = xp.full((batch, width), negative_infinity, dtype=log_probs.dtype)
        classes = log_probs.shape[2]
        feasible = xp.isfinite(log_likelihood)
        safe_likelihood = xp.where(feasible, log_likelihood, 0.0)
        for step in range(steps - 1, -1, -1):
            later = xp.logaddexp(beta, xp.concatenate([beta[:, 1:], xp.full((batch, 1), negative_infinity,
                                                                            dtype=beta.dtype)], axis=1))
            two_later = xp.concatenate([beta[:, 2:], xp.full((batch, 2), negative_infinity, dtype=beta.dtype)], axis=1)
            later = xp.where(skip_from, xp.logaddexp(later, two_later), later)
            start = xp.where(at_end, emit[step], negative_infinity)
            last_step = (step == active - 1)[:, None]
            inside = (step < active - 1)[:, None]
            beta = xp.where(last_step, start, xp.where(inside, later + emit[step], negative_infinity))
            # Posterior of each extended position at this step, summed per class.
            posterior = xp.exp(alpha[step] + beta - emit[step] - safe_likelihood[:, None])
            posterior = xp.where(xp.isfinite(posterior), posterior, 0.0)
            per_class = xp.zeros((batch, classes), dtype=log_probs.dtype)
            flat = (xp.arange(batch)[:, None] * classes + extended).ravel()
            per_class_flat = per_class.reshape(-1)
            self.device.scatter_add(per_class_flat, flat, posterior.ravel())
            occupancy[:, step] = per_class_flat.reshape(batch, classes)
        in_time = (xp.arange(steps)[None, :] < active[:, None])[:, :, None]
        grad_logits = xp.where(in_time & feasible[:, None, None], xp.exp(log_probs) - occupancy, 0.0)
        return grad_logits * grad[:, None, None].astype(grad_logits.dtype), None, None, None


def _ctc_loss(target, output, target_length, output_length, mask_index=0):
    """Per-sample CTC loss ``-log p(target | output)``, as ``keras.ops.ctc_loss``.

    Args:
        target: integer labels ``(batch, max_label_length)``, left-aligned.
        output: logits ``(batch, max_time, num_classes)`` (not softmaxed).
        target_length: ``(batch,)`` number of labels per sample.
        output_length: ``(batch,)`` number of valid time steps per sample.
        mask_index: the blank class.

    Returns:
        A float Tensor of shape ``(batch,)``.
    """
    if output.ndim != 3:
        raise ValueError(f"ctc_loss: output must be logits of shape (batch, time, classes), received shape "
                         f"{tuple(output.shape)}.")
    device = output.device
    batch = output.shape[0]

    def _integer(value, name, rank):
        data = value.data if isinstance(value, Tensor) else value
        with device.activate():
            array = device.asarray(data)
            if is_float_dtype(array.dtype) or (array.dtype.kind == "b" and name == "target"):
                array = array.astype(numpy.int64)  # as Keras's cast of the target to int32 (a length is no bool)
            if array.dtype.kind not in "iu" or array.ndim != rank or (rank and array.shape[0] != batch):
                raise ValueError(f"ctc_loss: {name} must be integers of rank {rank} with {batch} rows, received "
                                 f"dtype {array.dtype} and shape {tuple(array.shape)}.")
            return Tensor(array, device=device)

    target, target_length = _integer(target, "target", 2), _integer(target_length, "target_length", 1)
    output_length = _integer(output_length, "output_length", 1)
    if not (deferred_checks.active() and not device.host_kernels):  # (a GPU training step: no host read)
        for name, lengths, limit in (("target_length", target_length, target.shape[1]),
                                     ("output_length", output_length, output.shape[1])):
            low, high = device.bounds(lengths.data) if lengths.size else (0, 0)
            if low < 0 or high > limit:
                raise ValueError(f"ctc_loss: {name} must be in [0, {limit}] (the sequences' padded length), "
                                 f"received {low if low < 0 else high}.")
    labels = _checked_labels(device, target.data, target_length.data, int(mask_index), output.shape[-1])
    return CtcLoss(int(mask_index)).apply(output, Tensor(labels, device=device), target_length, output_length)


def _checked_labels(device, labels, label_length, blank, classes):
    """``labels`` with the padding past each length set to ``blank``, after
    checking the rest are class ids (module docstring).

    Raises:
        ValueError: a label within its sample's length is not in
            ``[0, classes)`` (on a GPU in a training step: at the next read
            of the logs).
    """
    with device.activate():
        xp = device.xp
        inside = xp.arange(labels.shape[1])[None, :] < label_length[:, None]
        labels = xp.where(inside, labels, blank)
        if labels.size == 0:
            return labels
        if deferred_checks.active() and not device.host_kernels:
            deferred_checks.defer_label_range("ctc_loss", device, labels, classes)
            return labels
        low, high = device.bounds(labels)
    if low < 0 or high >= classes:
        raise ValueError(f"ctc_loss: labels must be class ids in [0, {classes}) for output with {classes} classes; "
                         f"received label {low if low < 0 else high}.")
    return labels


def ctc_loss(target, output, target_length, output_length, mask_index=0):
    """The CTC negative log-likelihood of each sequence, shape ``(batch,)``
    (``keras.ops.ctc_loss``): ``output`` are logits ``(batch, steps,
    classes)``, ``target`` integer labels ``(batch, max_label_length)``,
    the lengths ``(batch,)``, ``mask_index`` the blank class. A sample whose
    labels cannot fit in its steps has an infinite loss and no gradient."""
    output = _as_tensor("ctc_loss", operand("ctc_loss", output))
    if not is_float_dtype(output.dtype) or output.dtype.itemsize < 4:
        output = output.astype("float32")  # Keras: result_type(output.dtype, "float32")
    if output.ndim == 3:
        classes = output.shape[-1]
        mask_index = validate_int("ctc_loss", "mask_index", mask_index, minimum=-classes, maximum=classes - 1) % classes
    else:
        mask_index = validate_int("ctc_loss", "mask_index", mask_index)
    return _ctc_loss(target, output, target_length, output_length, mask_index)
