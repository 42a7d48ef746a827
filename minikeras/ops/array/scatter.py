"""Writing into tensors by index: scatter, scatter_update, slice_update, and
the segment reductions segment_sum/max/min/prod.

``scatter(indices, values, shape)`` sums ``values`` into zeros at index
tuples (TensorFlow's ``scatter_nd``: repeated indices add up); its gradient
gathers at the indices. ``scatter_update`` replaces entries (for a repeated
index the last update wins, and only it gets a gradient; the replaced
entries of ``inputs`` get none) or, with ``reduction="add"``, adds.

Segment reductions take one segment id per row of ``data``:
``segment_sum`` is a scatter-add (``device.scatter_add``, atomic on a GPU);
``segment_max``/``segment_min`` use ``xp.maximum.at``/``xp.minimum.at`` and
split the gradient among tied extremes like ``ops.max``; ``segment_prod``
uses ``xp.multiply.at`` and passes ``prod / x`` (exact without zeros).
Empty segments give 0 for sum, 1 for prod, and the dtype's lowest/highest
value for max/min, as TensorFlow's ``unsorted_segment_*``; ids outside
``[0, num_segments)`` are dropped, as there.

``scatter`` and ``scatter_update`` read the bounds of each component of
their index tuples back (one transfer) and raise IndexError for one outside
its axis, on every device: CuPy's scatter kernels wrap an out-of-range id
silently (minikeras/testing/sim_cupy/_indexing.py models it), and a component past its axis
would land in another row of the flattened tensor even on NumPy.
"""

__all__ = ["scatter", "scatter_update", "slice_update", "segment_sum", "segment_max", "segment_min",
           "segment_prod"]

import numpy

from minikeras.autograd import Function
from minikeras.backend.dtypes import finfo, is_float_dtype
from minikeras.device import to_host
from minikeras.ops.array._common import _int_sequence, _scatter_add_rows, _size
from minikeras.ops.math._elementwise import call_without_gradient, detached, operand
from minikeras.ops.math._operands import _as_tensor
from minikeras._support.argument_validation import validate_flag, validate_int, validate_option, validate_shape


def _tensor(op_name, x):
    return _as_tensor(op_name, operand(op_name, x))


def _strides(shape):
    strides, step = [], 1
    for size in reversed(shape):
        strides.append(step)
        step *= size
    return list(reversed(strides))


def _rows(xp, indices, shape):
    """Flat row numbers of index tuples (last axis of ``indices``) in ``shape``'s leading axes."""
    depth = indices.shape[-1]
    if depth == 0:
        return xp.zeros(indices.shape[:-1], dtype=numpy.intp).reshape(-1)
    strides = xp.asarray(_strides(shape[:depth]), dtype=numpy.intp)
    indices = indices.astype(numpy.intp)  # a shape past the ids' own dtype (10**12 with int32 ids) still fits
    wrapped = xp.where(indices < 0, indices + xp.asarray(shape[:depth], dtype=numpy.intp), indices)
    return (wrapped.reshape(-1, depth) * strides).sum(axis=-1)


def _check_index_range(op_name, indices, shape):
    """Raise IndexError when a component of an index tuple lies outside
    ``[-size, size)`` of its axis (module docstring; one transfer)."""
    depth = indices.shape[-1]
    if indices.size == 0 or depth == 0:
        return
    device = indices.device
    with device.activate():
        flat = indices.data.reshape(-1, depth)
        lows, highs = device.to_host(device.xp.stack([flat.min(axis=0), flat.max(axis=0)])).tolist()
    for axis, (low, high, size) in enumerate(zip(lows, highs, shape)):
        if low < -size or high >= size:
            raise IndexError(f"{op_name}: indices must address the first {depth} axes of shape {tuple(shape)}; "
                             f"received index {low if low < -size else high} for axis {axis} of size {size}.")


def _check_indices(op_name, indices, values_shape, shape):
    if indices.dtype.kind not in "iu":
        raise TypeError(f"{op_name}: indices must be integers, received dtype {indices.dtype}.")
    if indices.ndim == 0:
        raise ValueError(f"{op_name}: indices must have at least 1 dimension (the index tuples on the last).")
    depth = indices.shape[-1]
    if depth > len(shape):
        raise ValueError(f"{op_name}: index tuples of length {depth} address a tensor of rank {len(shape)}.")
    expected = tuple(indices.shape[:-1]) + tuple(shape[depth:])
    if tuple(values_shape) != expected:
        raise ValueError(f"{op_name}: updates must have shape {expected} (indices' leading shape, then the "
                         f"addressed slices), received {tuple(values_shape)}.")


class ScatterAdd(Function):
    """Sum ``values`` into a zero tensor of ``shape`` at index tuples."""

    def __init__(self, shape):
        self.shape = shape

    def forward(self, indices, values):
        depth = indices.shape[-1]
        self.rows = _rows(self.device.xp, indices, self.shape)
        self.values_shape = values.shape
        self.inner = self.shape[depth:]
        flat = values.reshape((self.rows.shape[0],) + self.inner)
        return _scatter_add_rows(self.device, self.rows, flat, _size(self.shape[:depth])).reshape(self.shape)

    def backward(self, grad):
        return None, grad.reshape((-1,) + self.inner)[self.rows].reshape(self.values_shape)


def scatter(indices, values, shape):
    """A zero tensor of ``shape`` with ``values`` summed in at ``indices`` (``tf.scatter_nd``).

    Args:
        indices: integers of shape ``(..., depth)``: index tuples into ``shape``'s first ``depth`` axes.
        values: shape ``indices.shape[:-1] + shape[depth:]``.
        shape: the result's shape.

    Raises:
        IndexError: an index lies outside its axis, on every device (CuPy
            would wrap it).
    """
    return _scatter(indices, values, shape, checked=True)


def _scatter(indices, values, shape, checked):
    """scatter; ``checked=False`` for index tuples an op computed itself,
    known to be in range (no transfer to read their bounds)."""
    shape = validate_shape("scatter", shape)
    values = _tensor("scatter", values)
    indices = detached(_tensor("scatter", indices))
    _check_indices("scatter", indices, values.shape, shape)
    if checked:
        _check_index_range("scatter", indices, shape)
    return ScatterAdd(shape).apply(indices, values)


class ScatterUpdate(Function):
    def forward(self, inputs, indices, updates):
        xp = self.device.xp
        depth = indices.shape[-1]
        rows = _rows(xp, indices, inputs.shape)
        self.inner = inputs.shape[depth:]
        self.updates_shape = updates.shape
        out = inputs.copy()
        flat = out.reshape((-1,) + self.inner)
        flat[rows] = updates.reshape((rows.shape[0],) + self.inner)
        if any(self.needs_input_grad):
            # which update wins each row: the same fancy assignment on positions
            last_writer = xp.full(flat.shape[0], -1, dtype=numpy.intp)
            positions = xp.arange(rows.shape[0], dtype=numpy.intp)
            last_writer[rows] = positions
            self.save_for_backward(rows, last_writer[rows] == positions)
        return out

    def backward(self, grad):
        rows, wins = self.saved
        flat_grad = grad.reshape((-1,) + self.inner)
        grad_inputs = None
        if self.needs_input_grad[0]:
            grad_inputs = flat_grad.copy()
            grad_inputs[rows] = 0
            grad_inputs = grad_inputs.reshape(grad.shape)
        grad_updates = None
        if self.needs_input_grad[2]:
            mask = wins.reshape((-1,) + (1,) * len(self.inner))
            grad_updates = (flat_grad[rows] * mask).reshape(self.updates_shape)
        return grad_inputs, None, grad_updates


def scatter_update(inputs, indices, updates, reduction=None):
    """``inputs`` with the entries at ``indices`` replaced by ``updates`` (or added, ``reduction="add"``).

    Args:
        inputs: the tensor to update (not modified: a new tensor is returned).
        indices: integers of shape ``(..., depth)``: index tuples into the first ``depth`` axes.
        updates: shape ``indices.shape[:-1] + inputs.shape[depth:]``.
        reduction: None (replace) or "add"; "max", "min" and "mul" combine with the current values.

    Raises:
        IndexError: an index lies outside its axis, on every device (CuPy
            would wrap it).
    """
    inputs = _tensor("scatter_update", inputs)
    updates = _tensor("scatter_update", updates)
    indices = detached(_tensor("scatter_update", indices))
    _check_indices("scatter_update", indices, updates.shape, inputs.shape)
    validate_option("scatter_update", "reduction", reduction, (None, "add", "max", "min", "mul"))
    _check_index_range("scatter_update", indices, inputs.shape)
    if updates.dtype != inputs.dtype:
        updates = updates.astype(inputs.dtype)
    if reduction is None:
        return ScatterUpdate().apply(inputs, indices, updates)
    if reduction == "add":
        return inputs + _scatter(indices, updates, inputs.shape, checked=False)
    from minikeras.ops.math.compare import maximum, minimum, where

    depth = indices.shape[-1]
    inner = inputs.shape[depth:]
    ids = _row_ids(indices, inputs.shape)
    kind = {"max": "max", "min": "min", "mul": "prod"}[reduction]
    merged = _segment("scatter_update", updates.reshape((ids.shape[0],) + inner), ids,
                      _size(inputs.shape[:depth]), kind)
    flat_inputs = inputs.reshape((-1,) + inner)
    combined = {"max": maximum, "min": minimum}.get(reduction, lambda a, b: a * b)(flat_inputs, merged)
    return where(_touched(indices, inputs.shape), combined, flat_inputs).reshape(inputs.shape)


def _row_ids(rows, shape):
    return call_without_gradient("scatter_update", lambda xp, r: _rows(xp, r, shape), rows)


def _touched(rows, shape):
    depth = rows.shape[-1]
    count = _size(shape[:depth])
    inner_rank = len(shape) - depth

    def compute(xp, r):
        mask = xp.zeros(count, dtype=bool)
        mask[_rows(xp, r, shape)] = True
        return mask.reshape((count,) + (1,) * inner_rank)

    return call_without_gradient("scatter_update", compute, rows)


def slice_update(inputs, start_indices, updates):
    """``inputs`` with the block at ``start_indices`` replaced by ``updates`` (``lax.dynamic_update_slice``).

    Raises:
        ValueError: the block does not fit inside ``inputs``.
    """
    from minikeras.ops.array.padding import pad
    from minikeras.ops.math.compare import where

    inputs = _tensor("slice_update", inputs)
    updates = _tensor("slice_update", updates)
    starts = list(_int_sequence("slice_update", "start_indices", start_indices))
    if len(starts) != inputs.ndim or updates.ndim != inputs.ndim:
        raise ValueError(f"slice_update: start_indices and updates need rank {inputs.ndim}, received "
                         f"{starts} and shape {updates.shape}.")
    for start, size, total in zip(starts, updates.shape, inputs.shape):
        if start < 0 or start + size > total:
            raise ValueError(f"slice_update: a block of shape {updates.shape} at {starts} leaves a tensor of "
                             f"shape {inputs.shape}.")
    if updates.dtype != inputs.dtype:
        updates = updates.astype(inputs.dtype)
    widths = [(start, total - start - size) for start, size, total in zip(starts, updates.shape, inputs.shape)]
    inside = numpy.zeros(inputs.shape, dtype=bool)
    inside[tuple(numpy.s_[start:start + size] for start, size in zip(starts, updates.shape))] = True
    return where(inside, pad(updates, widths), inputs)


# ---------------------------------------------------------------- segments
class SegmentReduce(Function):
    def __init__(self, num_segments, kind):
        self.num_segments, self.kind = num_segments, kind

    def forward(self, data, ids):
        xp = self.device.xp
        if self.num_segments == 0:  # every id is out of range: nothing to gather, nothing to scatter back
            self.data_shape = data.shape
            return xp.zeros((0,) + data.shape[1:], dtype=data.dtype)
        valid = (ids >= 0) & (ids < self.num_segments)
        safe_ids = xp.where(valid, ids, 0).astype(numpy.intp)
        shape = (self.num_segments,) + data.shape[1:]
        valid_rows = valid.reshape((-1,) + (1,) * (data.ndim - 1))
        if self.kind == "sum":
            out = _scatter_add_rows(self.device, safe_ids, data * valid_rows, self.num_segments)
        elif self.kind == "prod":
            out = xp.ones(shape, dtype=data.dtype)
            self.device.scatter_reduce("multiply", out, safe_ids, xp.where(valid_rows, data, 1))
        else:
            info = finfo(data.dtype) if is_float_dtype(data.dtype) else xp.iinfo(data.dtype)
            start = info.min if self.kind == "max" else info.max
            out = xp.full(shape, start, dtype=data.dtype)
            self.device.scatter_reduce("maximum" if self.kind == "max" else "minimum", out, safe_ids,
                                       xp.where(valid_rows, data, start))
        if any(self.needs_input_grad):
            self.save_for_backward(data, safe_ids, valid_rows, out)
        return out

    def backward(self, grad):
        xp = self.device.xp
        if self.num_segments == 0:
            return xp.zeros(self.data_shape, dtype=grad.dtype), None
        data, ids, valid_rows, out = self.saved
        if self.kind == "sum":
            return grad[ids] * valid_rows, None
        if self.kind == "prod":
            return grad[ids] * out[ids] / data * valid_rows, None
        hits = (data == out[ids]) & valid_rows
        counts = _scatter_add_rows(self.device, ids, hits.astype(grad.dtype), self.num_segments)
        return hits * (grad / xp.maximum(counts, 1))[ids], None


def _segment(op_name, data, segment_ids, num_segments, kind, ids_sorted=False):
    validate_flag(op_name, "sorted", ids_sorted)  # accepted for Keras's signature: any order of ids works
    data = _as_tensor(op_name, operand(op_name, data), allow_bool=kind in ("sum", "prod"))
    ids = detached(_tensor(op_name, segment_ids))
    if ids.ndim != 1 or ids.dtype.kind not in "iu" or data.ndim == 0 or ids.shape[0] != data.shape[0]:
        raise ValueError(f"{op_name}: segment_ids must be 1-D integers with one id per row of data "
                         f"(shape {data.shape}), received shape {ids.shape} of dtype {ids.dtype}.")
    if num_segments is None:
        with ids.device.activate():
            num_segments = int(to_host(ids.data.max())) + 1 if ids.shape[0] else 0
    num_segments = validate_int(op_name, "num_segments", num_segments, minimum=0)
    return SegmentReduce(num_segments, kind).apply(data, ids)


def segment_sum(data, segment_ids, num_segments=None, sorted=False):  # noqa: A002
    """Sum of the rows of ``data`` per segment id (``num_segments`` defaults to max id + 1).

    ``sorted`` is accepted for Keras's signature; any order of ids works.
    """
    return _segment("segment_sum", data, segment_ids, num_segments, "sum", sorted)


def segment_max(data, segment_ids, num_segments=None, sorted=False):  # noqa: A002
    """Maximum of the rows per segment (the dtype's lowest value for an empty segment)."""
    return _segment("segment_max", data, segment_ids, num_segments, "max", sorted)


def segment_min(data, segment_ids, num_segments=None, sorted=False):  # noqa: A002
    """Minimum of the rows per segment (the dtype's highest value for an empty segment)."""
    return _segment("segment_min", data, segment_ids, num_segments, "min", sorted)


def segment_prod(data, segment_ids, num_segments=None, sorted=False):  # noqa: A002
    """Product of the rows per segment (1 for an empty segment)."""
    return _segment("segment_prod", data, segment_ids, num_segments, "prod", sorted)
