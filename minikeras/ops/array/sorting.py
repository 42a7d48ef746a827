"""Sorting and selection by value: sort, argsort, argpartition, top_k,
in_top_k, take_along_axis, searchsorted, digitize, unique.

``sort`` and ``top_k``'s values are gathers of the input, so their gradient
scatters back to the picked positions (``take_along_axis``'s backward, which
accumulates where an index repeats). Index results (``argsort``, ``top_k``'s
indices, ``searchsorted``...) are int32 and carry no gradient, as Keras's.
"""

__all__ = ["sort", "argsort", "argpartition", "top_k", "in_top_k", "take_along_axis", "searchsorted",
           "digitize", "unique"]

import functools

import numpy

from minikeras.autograd import Function, Tensor
from minikeras.backend.dtypes import is_half_dtype
from minikeras.ops.array._common import _scatter_add_rows, _single_axis, _size
from minikeras.ops.array.reshaping import flatten
from minikeras.ops.math._elementwise import call_without_gradient, detached, operand
from minikeras.ops.math._operands import _as_tensor
from minikeras._support.argument_validation import validate_axis, validate_flag, validate_int, validate_number, validate_option


def scatter_add_flat(device, positions, values, size):
    """A zero vector of ``size`` with ``values`` summed in at flat ``positions`` (repeats accumulate)."""
    return _scatter_add_rows(device, positions.reshape(-1), values.reshape(-1), size)


def _flat_positions(xp, indices, shape, axis):
    """Flat positions, in a C-ordered array of ``shape``, of the elements that
    ``take_along_axis(., indices, axis)`` picks (``indices`` has the output's shape)."""
    positions = xp.zeros(indices.shape, dtype=numpy.intp)
    stride = 1
    for dim in reversed(range(len(shape))):
        if dim == axis:
            coordinate = indices.astype(numpy.intp)
        else:
            coordinate = xp.arange(indices.shape[dim]).reshape((-1,) + (1,) * (len(shape) - dim - 1))
        positions = positions + coordinate * stride
        stride *= shape[dim]
    return positions


class TakeAlongAxis(Function):
    """``checked``: read the ids' bounds back first (one transfer), because
    CuPy, unlike NumPy, wraps out-of-range ids silently (its fancy indexing;
    seen on an H100). Ids minikeras computes itself skip the check."""

    def __init__(self, axis, checked=True):
        self.axis = axis
        self.checked = checked

    def forward(self, x, indices):
        xp = self.device.xp
        length = x.shape[self.axis]
        if self.checked and indices.size:
            low, high = self.device.bounds(indices)
            if low < -length or high >= length:
                raise IndexError(f"take_along_axis: indices must be in [-{length}, {length}) for axis {self.axis} "
                                 f"of shape {x.shape}, received index {low if low < -length else high}.")
        indices = xp.where(indices < 0, indices + length, indices)
        self.input_shape = x.shape
        if self.needs_input_grad[0]:
            self.save_for_backward(indices)
        return xp.take_along_axis(x, indices, axis=self.axis)

    def backward(self, grad):
        (indices,) = self.saved
        xp = self.device.xp
        indices = xp.broadcast_to(indices, grad.shape)
        # x may broadcast against indices off the axis: scatter into the broadcast
        # shape; the engine sums that back to x's shape.
        full_shape = grad.shape[:self.axis] + (self.input_shape[self.axis],) + grad.shape[self.axis + 1:]
        positions = _flat_positions(xp, indices, full_shape, self.axis)
        return scatter_add_flat(self.device, positions, grad, _size(full_shape)).reshape(full_shape), None


def take_along_axis(x, indices, axis=None):
    """Pick ``x``'s elements at ``indices`` along ``axis`` (``numpy.take_along_axis``); differentiable in ``x``.

    ``axis=None`` works on the flattened ``x``. Negative indices count from
    the end.

    Raises:
        TypeError: ``indices`` are not integers.
        ValueError: ``indices`` has another number of dimensions than ``x``.
        IndexError: an index is out of range, on every device (CuPy would
            wrap it).
    """
    return _take_along_axis(x, indices, axis, checked=True)


def _take_along_axis(x, indices, axis, checked):
    """take_along_axis; ``checked=False`` for ids an op computed itself,
    known to be in range (no transfer to read their bounds)."""
    x = _as_tensor("take_along_axis", operand("take_along_axis", x))
    indices = detached(_as_tensor("take_along_axis", operand("take_along_axis", indices)))
    if indices.dtype.kind not in "iu":
        raise TypeError(f"take_along_axis: indices must be integers, received dtype {indices.dtype}.")
    if axis is None:
        if indices.ndim != 1:  # Keras: indices must be 1-D with axis=None
            raise ValueError(f"take_along_axis: indices must be 1-D with axis=None, received shape {indices.shape}.")
        x, axis = flatten(x), 0
    if indices.ndim != x.ndim:
        raise ValueError(f"take_along_axis: indices must have as many dimensions as x ({x.ndim}), "
                         f"received shape {indices.shape}.")
    axis = _single_axis("take_along_axis", axis, x.ndim)
    return TakeAlongAxis(axis, checked).apply(x, indices)


def _checked_axis(op_name, x, axis):
    return _single_axis(op_name, axis, x.ndim)


def argsort(x, axis=-1):
    """Indices that sort ``x`` along ``axis`` (stable, int32; ``axis=None``: flattened). No gradient."""
    x = _as_tensor("argsort", operand("argsort", x))
    if axis is None:
        x, axis = flatten(x), 0
    if x.ndim == 0:
        return call_without_gradient("argsort", lambda xp, a: xp.zeros((1,), "int32"), x)  # NumPy's [0]
    axis = _checked_axis("argsort", x, axis)
    return call_without_gradient("argsort", lambda xp, a: xp.argsort(a, axis=axis).astype("int32"), x,
                                 half_in_float32=True)


class Sort(Function):
    """Sorted values; the permutation is only computed (argsort, several times
    slower than sort) when a gradient is needed, to send it back. CuPy 14's
    sorts (thrust) take no bfloat16: 16-bit inputs are sorted in float32,
    which is exact."""

    half_in_float32 = True

    def __init__(self, axis):
        self.axis = axis

    def forward(self, x):
        xp = self.device.xp
        if not self.needs_input_grad[0]:
            return xp.sort(x, self.axis)  # positional: the CuPy scan reads .sort(axis=) as the array method
        order = xp.argsort(x, axis=self.axis)
        self.save_for_backward(order)
        return xp.take_along_axis(x, order, axis=self.axis)

    def backward(self, grad):
        (order,) = self.saved
        xp = self.device.xp
        out = xp.empty(grad.shape, dtype=grad.dtype)
        # a permutation: plain assignment, no two writes to one place
        out.reshape(-1)[_flat_positions(xp, order, grad.shape, self.axis).reshape(-1)] = grad.reshape(-1)
        return out


def sort(x, axis=-1):
    """``x`` sorted ascending along ``axis`` (``axis=None``: flattened); the gradient follows each element."""
    x = _as_tensor("sort", operand("sort", x))
    if axis is None:
        x, axis = flatten(x), 0
    return Sort(_checked_axis("sort", x, axis)).apply(x)  # a 0-d x has no axis -1: refused (NumPy, Keras)


def argpartition(x, kth, axis=-1):
    """Indices that partition ``x`` around its ``kth`` element along ``axis`` (int32, no gradient)."""
    x = _as_tensor("argpartition", operand("argpartition", x))
    if axis is None:  # the flattened tensor, as NumPy's argpartition
        x, axis = flatten(x), 0
    axis = _checked_axis("argpartition", x, axis)
    kth = validate_int("argpartition", "kth", kth, minimum=-x.shape[axis], maximum=x.shape[axis] - 1)
    return call_without_gradient("argpartition",
                                 lambda xp, a: xp.argpartition(a, kth, axis=axis).astype("int32"), x,
                                 half_in_float32=True)


def _top_k_sorted(xp, a, k):
    """Indices of the k largest, largest first, ties by lower index: a stable ascending
    sort of the reversed rows, read backwards (negating would overflow integer minima)."""
    n = a.shape[-1]
    order = xp.argsort(a[..., ::-1], axis=-1, kind="stable")[..., ::-1]
    return (n - 1 - order[..., :k]).astype("int32")


def _top_k_partial(xp, a, k):
    """The same by partial selection, then a sort of the k picked (several times faster when
    k << n); rows where the k-th value is tied outside the selection take the full sort."""
    n = a.shape[-1]
    reversed_ = a[..., ::-1]
    part = xp.argpartition(reversed_, n - k, axis=-1)[..., n - k:]
    picked = xp.take_along_axis(reversed_, part, axis=-1)
    threshold = picked.min(axis=-1, keepdims=True)
    if bool((xp.sum(a >= threshold, axis=-1) > k).any()):  # a tie at the boundary: order by index
        return _top_k_sorted(xp, a, k)
    order = xp.argsort(picked, axis=-1, kind="stable")[..., ::-1]
    return (n - 1 - xp.take_along_axis(part, order, axis=-1)).astype("int32")


def top_k(x, k, sorted=True):  # noqa: A002  (keras.ops name)
    """The ``k`` largest entries along the last axis and their indices (int32).

    Ties keep the lower index first (as TensorFlow's ``top_k``); ``sorted``
    is accepted for Keras's signature: the values always come largest first.
    The values' gradient goes to the picked entries.

    Returns:
        ``(values, indices)``.

    Raises:
        ValueError: ``k`` is not in ``[0, x.shape[-1]]`` or ``x`` is 0-d.
    """
    x = _as_tensor("top_k", operand("top_k", x))
    if x.ndim == 0:
        raise ValueError("top_k expects a tensor with at least 1 dimension, received a scalar.")
    k = validate_int("top_k", "k", k, minimum=0, maximum=x.shape[-1])
    validate_flag("top_k", "sorted", sorted)  # accepted for Keras's signature: the values come sorted anyway

    if k < x.shape[-1] and x.shape[-1] > 64 and x.device.host_kernels:
        compute = functools.partial(_top_k_partial, k=k)
    else:
        compute = functools.partial(_top_k_sorted, k=k)
    indices = call_without_gradient("top_k", compute, x, half_in_float32=True)  # CuPy sorts no bfloat16
    return _take_along_axis(x, indices, -1, checked=False), indices  # computed: in range


def in_top_k(targets, predictions, k):
    """Whether each target's prediction is among the ``k`` largest of its row (bool, no gradient).

    A target whose score ties the k-th largest counts as in (as TensorFlow).

    Raises:
        IndexError: a target is not a class id in ``[0, classes)``, on every
            device (the targets' bounds are read back: CuPy would wrap it).
    """
    predictions = detached(_as_tensor("in_top_k", operand("in_top_k", predictions)))
    targets = detached(_as_tensor("in_top_k", operand("in_top_k", targets)))
    if predictions.ndim != 2 or targets.ndim != 1 or targets.shape[0] != predictions.shape[0]:
        raise ValueError(f"in_top_k expects predictions of shape (batch, classes) and targets of shape (batch,), "
                         f"received {predictions.shape} and {targets.shape}.")
    k = validate_int("in_top_k", "k", k, minimum=0)
    classes = predictions.shape[1]
    if targets.size:
        low, high = targets.device.bounds(targets.data)
        if low < 0 or high >= classes:
            raise IndexError(f"in_top_k: targets must be class ids in [0, {classes}) for predictions of shape "
                             f"{predictions.shape}, received target {low if low < 0 else high}.")

    def compute(xp, target, scores):
        rows = xp.arange(scores.shape[0])
        target_scores = scores[rows, target.astype(numpy.intp)]
        larger = (scores > target_scores[:, None]).sum(axis=-1)
        return (larger < k) & xp.isfinite(target_scores)

    return call_without_gradient("in_top_k", compute, targets, predictions)


def searchsorted(sorted_sequence, values, side="left"):
    """Indices where ``values`` would be inserted into the 1-D ``sorted_sequence`` (int32)."""
    validate_option("searchsorted", "side", side, ("left", "right"))
    sequence = _as_tensor("searchsorted", operand("searchsorted", sorted_sequence))
    if sequence.ndim != 1:
        raise ValueError(f"searchsorted expects a 1-D sorted_sequence, received shape {sequence.shape}.")
    return call_without_gradient("searchsorted",
                                 lambda xp, s, v: xp.searchsorted(s, v, side=side).astype("int32"),
                                 sequence, values)


def digitize(x, bins):
    """The bin of each element of ``x`` (``numpy.digitize`` with increasing ``bins``; int32)."""
    bins_tensor = _as_tensor("digitize", operand("digitize", bins), allow_complex=False)
    if bins_tensor.ndim != 1:
        raise ValueError(f"digitize: bins must be a 1-D tensor of edges, received shape {bins_tensor.shape}.")
    edges = bins_tensor.numpy().astype("float64") if bins_tensor.size else numpy.zeros(0)
    steps = numpy.diff(edges)
    if numpy.isnan(edges).any() or not ((steps >= 0).all() or (steps <= 0).all()):
        raise ValueError(f"digitize: bins must be monotonically increasing or decreasing, received {edges.tolist()}.")
    return call_without_gradient("digitize", lambda xp, a, b: xp.digitize(a, b).astype("int32"), x, bins)


def unique(x, sorted=True, return_index=False, return_inverse=False, return_counts=False,  # noqa: A002
           axis=None, size=None, fill_value=None):
    """The distinct elements of ``x`` (sorted), with optional first indices, inverse and counts.

    ``size`` pads (with ``fill_value``, default the smallest value) or cuts the
    result to a fixed length, as JAX's. No gradient.
    """
    x = detached(_as_tensor("unique", operand("unique", x)))
    # sorted=False leaves the order free; the values come sorted either way, as with Keras's NumPy backend.
    flags = {name: validate_flag("unique", name, value) for name, value in (
        ("sorted", sorted), ("return_index", return_index), ("return_inverse", return_inverse),
        ("return_counts", return_counts))}
    return_index, return_inverse, return_counts = (flags[name] for name in ("return_index", "return_inverse",
                                                                              "return_counts"))
    if axis is not None:
        axis = validate_axis("unique", axis, x.ndim)
    if size is not None:
        size = validate_int("unique", "size", size, minimum=1)
    if fill_value is not None:
        validate_number("unique", "fill_value", fill_value, finite=False)
    outputs = []
    with x.device.activate():
        xp = x.device.xp
        data = x.data
        if is_half_dtype(data.dtype):  # CuPy 14 sorts no bfloat16: in float32 (exact), values rounded back
            data = data.astype(numpy.float32)
        result = xp.unique(data, return_index=True, return_inverse=True, return_counts=True, axis=axis)
        values, index, inverse, counts = result
        values = values.astype(x.dtype, copy=False)
        if size is not None:
            fill = values.min() if fill_value is None and values.size else (fill_value or 0)
            if values.shape[0] >= size:
                values, index, counts = values[:size], index[:size], counts[:size]
            else:
                extra = size - values.shape[0]
                pad = xp.full((extra,) + values.shape[1:], fill, dtype=values.dtype)
                values = xp.concatenate([values, pad])
                index = xp.concatenate([index, xp.zeros(extra, index.dtype)])
                counts = xp.concatenate([counts, xp.zeros(extra, counts.dtype)])
        outputs.append(values)
        if return_index:
            outputs.append(index.astype("int32"))
        if return_inverse:
            # x's shape for axis=None (NumPy 2 and Keras), the axis's length otherwise
            outputs.append(inverse.reshape(x.shape).astype("int32") if axis is None else
                           inverse.reshape(-1).astype("int32"))
        if return_counts:
            outputs.append(counts.astype("int32"))
    tensors = tuple(Tensor(array, device=x.device) for array in outputs)
    return tensors[0] if len(tensors) == 1 else tensors
