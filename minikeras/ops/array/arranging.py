"""Rearranging ops: flip/fliplr/flipud, rot90, roll, broadcast_to, append,
array_split, hsplit/vsplit/dsplit, hstack/vstack/dstack, unstack, tril,
triu, diag, diagflat, diagonal, trace, meshgrid, select, get_item, slice,
nonzero, unravel_index, vander, copy.

All are compositions of the differentiable array ops (``getitem``,
``concatenate``, ``stack``, ``where``...), so gradients follow the elements
they move; ``nonzero`` and ``unravel_index`` return integer indices without
gradient.
"""

__all__ = ["flip", "fliplr", "flipud", "rot90", "roll", "broadcast_to", "append", "array_split", "hsplit",
           "vsplit", "dsplit", "hstack", "vstack", "dstack", "unstack", "tril", "triu", "diag", "diagflat",
           "diagonal", "trace", "meshgrid", "select", "get_item", "slice", "nonzero", "unravel_index",
           "vander", "copy"]

import numpy

from minikeras.autograd import Function, Tensor
from minikeras.ops._checks import normalize_axis
from minikeras.ops.array._common import _int_sequence, _single_axis
from minikeras.ops.array.indexing import _take_in_range, getitem
from minikeras.ops.array.joining import concatenate, rows_of, split, stack
from minikeras.ops.array.reshaping import expand_dims, flatten, moveaxis, reshape, swapaxes
from minikeras.ops.math._elementwise import call_without_gradient, operand
from minikeras.ops.math._operands import _as_tensor
from minikeras.ops.math.compare import where
from minikeras._support.argument_validation import is_int, validate_flag, validate_tensor_input, validate_int, validate_shape


def _tensor(op_name, x):
    return _as_tensor(op_name, operand(op_name, x))


def flip(x, axis=None):
    """``x`` reversed along ``axis`` (an int, a tuple, or None for all)."""
    x = _tensor("flip", x)
    axes = normalize_axis("flip", axis, x.ndim)
    return getitem(x, tuple(numpy.s_[::-1] if i in axes else numpy.s_[:] for i in range(x.ndim)))


def fliplr(x):
    """``x`` reversed along axis 1."""
    return flip(x, 1)


def flipud(x):
    """``x`` reversed along axis 0."""
    return flip(x, 0)


def rot90(array, k=1, axes=(0, 1)):
    """``array`` rotated by 90 degrees ``k`` times in the plane of ``axes`` (``numpy.rot90``)."""
    x = _tensor("rot90", array)
    k = validate_int("rot90", "k", k) % 4
    if not isinstance(axes, (tuple, list)) or len(axes) != 2:
        raise ValueError(f"rot90: axes must be two axes, received {axes!r}.")
    first, second = (_single_axis("rot90", axis, x.ndim) for axis in axes)
    if first == second:
        raise ValueError(f"rot90: the two axes must differ, received {axes!r}.")
    if k == 0:
        return x
    if k == 2:
        return flip(flip(x, first), second)
    if k == 1:
        return swapaxes(flip(x, second), first, second)
    return flip(swapaxes(x, first, second), second)


def roll(x, shift, axis=None):
    """Elements shifted by ``shift`` along ``axis`` (None: the flattened tensor, reshaped back)."""
    x = _tensor("roll", x)
    if axis is None:
        shifts = _int_sequence("roll", "shift", shift)
        if len(shifts) != 1:
            raise ValueError(f"roll: with axis=None, shift must be one int, received {shift!r}.")
        return reshape(roll(flatten(x), shifts[0], 0), x.shape)
    shifts = _int_sequence("roll", "shift", shift)
    axes = _int_sequence("roll", "axis", axis)
    if len(shifts) == 1 and len(axes) > 1:
        shifts = shifts * len(axes)
    if len(shifts) != len(axes):
        raise ValueError(f"roll: shift and axis must have the same length, received {shift!r} and {axis!r}.")
    for amount, each in zip(shifts, axes):
        each = _single_axis("roll", each, x.ndim)
        size = x.shape[each]
        if size:
            x = _take_in_range(x, (numpy.arange(size) - int(amount)) % size, each)
    return x


class BroadcastTo(Function):
    def __init__(self, shape):
        self.shape = shape

    def forward(self, x):
        return self.device.xp.broadcast_to(x, self.shape).copy()

    def backward(self, grad):
        return grad  # the engine sums it back to the input's shape


def broadcast_to(x, shape):
    """``x`` broadcast to ``shape`` (NumPy rules); the gradient sums over the broadcast axes."""
    x = _tensor("broadcast_to", x)
    shape = validate_shape("broadcast_to", shape)
    try:
        numpy.broadcast_shapes(x.shape, shape)
    except ValueError:
        raise ValueError(f"broadcast_to: cannot broadcast shape {x.shape} to {shape}.") from None
    if numpy.broadcast_shapes(x.shape, shape) != shape:
        raise ValueError(f"broadcast_to: cannot broadcast shape {x.shape} to {shape}.")
    return BroadcastTo(shape).apply(x)


def append(x1, x2, axis=None):
    """``x2`` appended to ``x1`` along ``axis`` (None: both flattened)."""
    a, b = _tensor("append", x1), _tensor("append", x2)
    if axis is None:
        return concatenate([flatten(a), flatten(b)], 0)
    return concatenate([a, b], axis)


def array_split(x, indices_or_sections, axis=0):
    """Split into ``indices_or_sections`` parts that may differ in size by one (``numpy.array_split``)."""
    x = _tensor("array_split", x)
    axis = _single_axis("array_split", axis, x.ndim)
    if is_int(indices_or_sections):
        sections = validate_int("array_split", "indices_or_sections", indices_or_sections, minimum=1)
        size = x.shape[axis]
        base, extra = divmod(size, sections)
        sizes = [base + 1] * extra + [base] * (sections - extra)
        boundaries = list(numpy.cumsum(sizes)[:-1])
    else:
        # Keras takes a number of sections only (its TypeError for a list of split points)
        raise TypeError(f"array_split: indices_or_sections must be an int (the number of sections), received "
                        f"{type(indices_or_sections).__name__} {indices_or_sections!r}.")
    head = (numpy.s_[:],) * axis
    edges = [0] + [int(b) for b in boundaries] + [x.shape[axis]]
    return [getitem(x, head + (numpy.s_[start:stop],)) for start, stop in zip(edges[:-1], edges[1:])]


def hsplit(x, indices_or_sections):
    """Split along axis 1 (axis 0 for 1-D), as ``numpy.hsplit``."""
    x = _tensor("hsplit", x)
    return split(x, indices_or_sections, axis=1 if x.ndim > 1 else 0)


def vsplit(x, indices_or_sections):
    """Split along axis 0, as ``numpy.vsplit``."""
    return split(_tensor("vsplit", x), indices_or_sections, axis=0)


def dsplit(x, indices_or_sections):
    """Split along axis 2, as ``numpy.dsplit``."""
    return split(_tensor("dsplit", x), indices_or_sections, axis=2)


def _at_least(x, ndim, where_new):
    while x.ndim < ndim:
        x = expand_dims(x, where_new(x))
    return x


def _sequence(op_name, xs):
    """``xs`` checked to be a list or tuple of tensors, or a tensor of rows (``joining.rows_of``)."""
    return rows_of(op_name, xs)


def hstack(xs):
    """Concatenate along axis 1 (axis 0 for 1-D inputs)."""
    xs = [_tensor("hstack", x) for x in _sequence("hstack", xs)]
    return concatenate(xs, axis=0 if xs and xs[0].ndim <= 1 else 1)


def vstack(xs):
    """Concatenate along axis 0, 1-D inputs as rows."""
    xs = [_at_least(_tensor("vstack", x), 2, lambda t: 0) for x in _sequence("vstack", xs)]
    return concatenate(xs, axis=0)


def dstack(xs):
    """Concatenate along axis 2 (inputs made at least 3-D as ``numpy.dstack``)."""
    def three_d(x):
        x = _tensor("dstack", x)
        if x.ndim == 0:
            return reshape(x, (1, 1, 1))
        if x.ndim == 1:
            return reshape(x, (1, -1, 1))
        if x.ndim == 2:
            return expand_dims(x, 2)
        return x

    return concatenate([three_d(x) for x in _sequence("dstack", xs)], axis=2)


def unstack(x, num=None, axis=0):
    """The slices of ``x`` along ``axis`` as a list."""
    x = _tensor("unstack", x)
    axis = _single_axis("unstack", axis, x.ndim)
    if num is not None and not (is_int(num) and num == x.shape[axis]):
        raise ValueError(f"unstack: num={num} but axis {axis} has size {x.shape[axis]}.")
    head = (numpy.s_[:],) * axis
    return [getitem(x, head + (i,)) for i in range(x.shape[axis])]


def _triangle_mask(rows, columns, k, lower):
    grid = numpy.arange(columns)[None, :] - numpy.arange(rows)[:, None]
    return grid <= k if lower else grid >= k


def _zero_of(x):
    """The zero of ``x``'s dtype, kept weak (a bool tensor stays bool)."""
    return False if x.dtype == numpy.bool_ else 0


def tril(x, k=0):
    """``x`` with the entries above the ``k``-th diagonal zeroed (last two axes)."""
    x = _tensor("tril", x)
    k = validate_int("tril", "k", k)
    if x.ndim < 2:
        raise ValueError(f"tril expects at least 2 dimensions, received shape {x.shape}.")
    return where(_triangle_mask(x.shape[-2], x.shape[-1], k, True), x, _zero_of(x))


def triu(x, k=0):
    """``x`` with the entries below the ``k``-th diagonal zeroed (last two axes)."""
    x = _tensor("triu", x)
    k = validate_int("triu", "k", k)
    if x.ndim < 2:
        raise ValueError(f"triu expects at least 2 dimensions, received shape {x.shape}.")
    return where(_triangle_mask(x.shape[-2], x.shape[-1], k, False), x, _zero_of(x))


def diagonal(x, offset=0, axis1=0, axis2=1):
    """The ``offset``-th diagonal over ``axis1``/``axis2``, as the last axis (``numpy.diagonal``)."""
    x = _tensor("diagonal", x)
    if x.ndim < 2:
        raise ValueError(f"diagonal expects at least 2 dimensions, received shape {x.shape}.")
    offset = validate_int("diagonal", "offset", offset)
    first, second = _single_axis("diagonal", axis1, x.ndim), _single_axis("diagonal", axis2, x.ndim)
    moved = moveaxis(x, (first, second), (-2, -1))
    rows, columns = moved.shape[-2], moved.shape[-1]
    start_row, start_column = (0, offset) if offset >= 0 else (-offset, 0)
    length = max(0, min(rows - start_row, columns - start_column))
    row_index = numpy.arange(length) + start_row
    column_index = numpy.arange(length) + start_column
    return getitem(moved, (Ellipsis, row_index, column_index))


def trace(x, offset=0, axis1=0, axis2=1):
    """Sum of the ``offset``-th diagonal over ``axis1``/``axis2``."""
    diagonal_values = diagonal(x, offset, axis1, axis2)
    return diagonal_values.sum(axis=-1)


def diag(x, k=0):
    """The ``k``-th diagonal of a matrix, or a matrix with a 1-D ``x`` on its ``k``-th diagonal."""
    x = _tensor("diag", x)
    k = validate_int("diag", "k", k)
    if x.ndim == 2:
        return diagonal(x, k)
    if x.ndim != 1:
        raise ValueError(f"diag expects a 1-D or 2-D tensor, received shape {x.shape}.")
    n = x.shape[0] + abs(k)
    positions = numpy.arange(x.shape[0])
    rows, columns = (positions, positions + k) if k >= 0 else (positions - k, positions)
    flat_positions = rows * n + columns
    # each output element reads x at one position or is 0: a take then a mask
    source = numpy.zeros(n * n, dtype=numpy.intp)
    mask = numpy.zeros(n * n, dtype=bool)
    source[flat_positions] = positions
    mask[flat_positions] = True
    return reshape(where(mask, _take_in_range(x, source, 0), _zero_of(x)), (n, n))


def diagflat(x, k=0):
    """A matrix with the flattened ``x`` on its ``k``-th diagonal."""
    return diag(flatten(_tensor("diagflat", x)), k)


def meshgrid(*x, indexing="xy"):
    """Coordinate grids from 1-D coordinate vectors (``numpy.meshgrid``, ``indexing`` 'xy' or 'ij')."""
    if indexing not in ("xy", "ij"):
        raise ValueError(f"meshgrid: indexing must be 'xy' or 'ij', received {indexing!r}.")
    vectors = [flatten(_tensor("meshgrid", value)) for value in x]
    shape = [v.shape[0] for v in vectors]
    if indexing == "xy" and len(vectors) >= 2:
        shape[0], shape[1] = shape[1], shape[0]
    grids = []
    for i, vector in enumerate(vectors):
        position = i
        if indexing == "xy" and len(vectors) >= 2 and i < 2:
            position = 1 - i
        view = [1] * len(vectors)
        view[position] = -1
        grids.append(broadcast_to(reshape(vector, tuple(view)), tuple(shape)))
    return grids


def select(condlist, choicelist, default=0):
    """Per element, the choice of the first true condition, else ``default`` (``numpy.select``)."""
    for name, value in (("condlist", condlist), ("choicelist", choicelist)):
        if not isinstance(value, (list, tuple)):
            raise TypeError(f"select: {name} must be a list of tensors, received {type(value).__name__} "
                            f"{value!r:.60}.")
    validate_tensor_input("select", default)
    if len(condlist) != len(choicelist):
        raise ValueError(f"select: condlist and choicelist must have the same length, received "
                         f"{len(condlist)} and {len(choicelist)}.")
    if not condlist:
        raise ValueError("select expects at least one condition.")
    result = default
    for condition, choice in reversed(list(zip(condlist, choicelist))):
        result = where(operand("select", condition), operand("select", choice), result)
    return result


def get_item(x, key):
    """``x[key]`` (Keras's functional spelling of indexing)."""
    return getitem(_tensor("get_item", x), key)


def slice(inputs, start_indices, shape):  # noqa: A001  (keras.ops name)
    """The block of ``shape`` starting at ``start_indices`` (``lax.dynamic_slice``, without clamping).

    Raises:
        ValueError: the lengths differ from ``inputs``' rank, or the block leaves the tensor.
    """
    x = _tensor("slice", inputs)
    starts = list(_int_sequence("slice", "start_indices", start_indices))
    shape = list(_int_sequence("slice", "shape", shape))
    if len(starts) != x.ndim or len(shape) != x.ndim:
        raise ValueError(f"slice: start_indices and shape need {x.ndim} entries, received {starts} and {shape}.")
    for start, size, total in zip(starts, shape, x.shape):
        if start < 0 or size < 0 or start + size > total:
            raise ValueError(f"slice: the block at {starts} of shape {shape} leaves a tensor of shape {x.shape}.")
    return getitem(x, tuple(numpy.s_[start:start + size] for start, size in zip(starts, shape)))


def nonzero(x):
    """The indices of the nonzero elements, one int32 tensor per axis.

    Raises:
        ValueError: a 0-d ``x`` (it has no axis to index; Keras and NumPy refuse it too).
    """
    if getattr(operand("nonzero", x), "ndim", 0) == 0:
        raise ValueError(f"nonzero expects a tensor of at least 1 dimension, received a 0-d {type(x).__name__}.")
    return call_without_gradient("nonzero", lambda xp, a: tuple(i.astype("int32") for i in xp.nonzero(a)), x)


def unravel_index(indices, shape):
    """Flat ``indices`` as a tuple of coordinate tensors in an array of ``shape``."""
    shape = validate_shape("unravel_index", shape)
    flat = _tensor("unravel_index", indices)
    host = numpy.asarray(flat.numpy())
    if host.dtype.kind not in "iu":
        raise TypeError(f"unravel_index: indices must be integers, received dtype {host.dtype}.")
    size = int(numpy.prod(shape, dtype=object))
    if host.size and (host.min() < 0 or host.max() >= size):
        raise ValueError(f"unravel_index: indices must be in [0, {size}) for shape {shape}, received values in "
                         f"[{host.min()}, {host.max()}].")
    return call_without_gradient(
        "unravel_index", lambda xp, i: tuple(c.astype(i.dtype) for c in xp.unravel_index(i, shape)), indices)


def vander(x, N=None, increasing=False):  # noqa: N803  (keras.ops name)
    """The Vandermonde matrix of 1-D ``x``: columns are powers of ``x`` (decreasing unless ``increasing``)."""
    x = _tensor("vander", x)
    if x.ndim != 1:
        raise ValueError(f"vander expects a 1-D tensor, received shape {x.shape}.")
    columns = x.shape[0] if N is None else validate_int("vander", "N", N, minimum=0)
    increasing = validate_flag("vander", "increasing", increasing)
    powers = numpy.arange(columns)
    if not increasing:
        powers = powers[::-1]
    from minikeras.ops.math.arithmetic import power

    if columns == 0:
        return reshape(x, (-1, 1))[:, :0]
    out = stack([power(x, int(p)) for p in powers], axis=1)
    return out.astype("bool") if x.dtype == numpy.bool_ else out  # powers of bools are bools (Keras's dtype)


class Copy(Function):
    def forward(self, x):
        return x.copy()

    def backward(self, grad):
        return grad


def copy(x):
    """A copy of ``x`` (the gradient passes through)."""
    return Copy().apply(_tensor("copy", x))

