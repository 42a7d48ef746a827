"""Shape ops: reshape, transpose, expand_dims, squeeze, flatten, indexing,
concatenate, stack, split, tile, repeat, pad, cast, moveaxis, swapaxes.

Ops that only move or select elements have simple gradients: the gradient
is moved or selected back. Indexing that may pick an element more than once
(integer arrays, ``repeat``, ``pad`` with reflect modes) scatter-adds its
gradient so that repeated picks accumulate.
"""

__all__ = [
    "reshape", "transpose", "expand_dims", "squeeze", "flatten", "ravel", "getitem", "take",
    "concatenate", "stack", "split", "tile", "repeat", "pad", "cast", "moveaxis", "swapaxes",
]

import numpy

from minikeras import backend
from minikeras.autograd import Function, Tensor, no_grad
from minikeras.device import to_host
from minikeras.ops._checks import normalize_axis, shape_of
from minikeras.ops.math.unary import _as_tensor
from minikeras.utils.argument_validation import check_dtype, entry_point, validate_tensor_input
from minikeras.utils.argument_validation import is_int as _is_int


def _size(shape):
    total = 1
    for dim in shape:
        total *= dim
    return total


def _int_sequence(op_name, name, value):
    """An int, a sequence of ints or a 1-D integer array as a tuple of ints.

    Raises:
        TypeError: anything else (a float, a bool, a 0-d array, None...).
    """
    if _is_int(value):
        return (int(value),)
    if isinstance(value, Tensor) or backend.is_array(value):
        value = to_host(getattr(value, "data", value))
        if value.ndim == 1 and value.dtype.kind in "iu":
            return tuple(int(v) for v in value.tolist())
    elif isinstance(value, (list, tuple)) and all(_is_int(v) for v in value):
        return tuple(int(v) for v in value)
    raise TypeError(f"{op_name}: {name} must be an int or a sequence of ints, received {type(value).__name__} "
                    f"{value!r:.80}.")


def _single_axis(op_name, axis, ndim):
    """``axis`` as one non-negative int (ValueError naming the op otherwise)."""
    if not _is_int(axis):
        raise TypeError(f"{op_name}: axis must be an int, received {axis!r}.")
    if not -ndim <= axis < max(ndim, 1) or ndim == 0:
        raise ValueError(f"{op_name}: axis {axis} is out of range for a tensor with {ndim} dimensions.")
    return int(axis) % ndim


def _scatter_add_rows(device, indices, rows, num_rows):
    """Sum ``rows[i]`` into row ``indices[i]`` of a zero array of ``num_rows`` rows.

    Args:
        device: the Device it runs on.
        indices: 1-D integer array of non-negative row numbers.
        rows: array of shape ``(len(indices), *inner)``.
        num_rows: rows of the result.

    Returns:
        An array of shape ``(num_rows, *inner)`` and ``rows``' dtype in
        which repeated indices have accumulated.
    """
    xp = device.xp
    inner = rows.shape[1:]
    out = xp.zeros((num_rows,) + inner, dtype=rows.dtype)
    if not device.host_kernels:
        device.scatter_add(out, indices, rows)  # atomic adds on a GPU
        return out
    # NumPy's add.at is about 4x faster on a flat array than on rows (measured
    # for 12800 rows of 64 into 10000: 1.8 ms against 7.6 ms), so scatter
    # single elements at flat positions.
    width = _size(inner)
    indices = indices.astype(numpy.intp, copy=False)
    flat_rows = rows.reshape(-1)
    if width == 1:
        positions = indices
    else:
        positions = (indices[:, None] * width + xp.arange(width)).reshape(-1)
    device.scatter_add(out.reshape(-1), positions, flat_rows)
    return out


def _scatter_add_axis(device, grad, indices, size, axis):
    """Inverse of ``xp.take(x, indices, axis)`` for the gradient: sum ``grad``
    back into ``size`` entries along ``axis``."""
    xp = device.xp
    moved = xp.moveaxis(grad, axis, 0)
    inner = moved.shape[1:]
    rows = xp.ascontiguousarray(moved).reshape(len(indices), _size(inner))
    summed = _scatter_add_rows(device, indices, rows, size).reshape((size,) + inner)
    return xp.moveaxis(summed, 0, axis)


# ---------------------------------------------------------------- reshaping
class Reshape(Function):
    """The same elements in a new shape; the gradient is reshaped back."""

    def __init__(self, shape):
        self.shape = shape

    def forward(self, x):
        self.input_shape = x.shape
        return x.reshape(self.shape)

    def backward(self, grad):
        return grad.reshape(self.input_shape)


class ExpandDims(Reshape):
    """A reshape that inserts axes of size 1."""


class Squeeze(Reshape):
    """A reshape that removes axes of size 1."""


class Flatten(Reshape):
    """A reshape to one axis."""


class Transpose(Function):
    """A permutation of the axes; the gradient gets the inverse permutation."""

    def __init__(self, axes):
        self.axes = axes

    def forward(self, x):
        return x.transpose(self.axes)

    def backward(self, grad):
        return grad.transpose(tuple(int(a) for a in numpy.argsort(self.axes)))


def reshape(x, shape):
    """Give ``x`` a new shape with the same number of elements (one -1 allowed)."""
    x = _as_tensor("reshape", x)
    shape = _int_sequence("reshape", "shape", shape)
    old = shape_of(x)
    size = int(numpy.prod(old))
    unknown = [i for i, s in enumerate(shape) if s == -1]
    known = int(numpy.prod([s for s in shape if s != -1]))
    if len(unknown) > 1 or any(s < -1 for s in shape):
        raise ValueError(f"reshape: invalid target shape {shape} (at most one -1, no other negatives).")
    if unknown:
        if known == 0 or size % known:
            raise ValueError(f"reshape: cannot reshape a tensor of shape {old} ({size} elements) into {shape}.")
        shape = tuple(size // known if s == -1 else s for s in shape)
    elif known != size:
        raise ValueError(f"reshape: cannot reshape a tensor of shape {old} ({size} elements) into {shape}.")
    return Reshape(shape).apply(x)


def transpose(x, axes=None):
    """Permute the axes of ``x`` (reverse them when ``axes`` is None)."""
    x = _as_tensor("transpose", x)
    ndim = len(shape_of(x))
    if axes is None:
        axes = tuple(reversed(range(ndim)))
    axes = tuple(int(a) % max(ndim, 1) for a in axes)
    if sorted(axes) != list(range(ndim)):
        raise ValueError(f"transpose: axes {axes} are not a permutation of the {ndim} axes of shape {shape_of(x)}.")
    return Transpose(axes).apply(x)


def expand_dims(x, axis):
    """Insert axes of size 1 at ``axis`` (an int or a tuple), as NumPy does.

    Example:
        >>> expand_dims(zeros((2, 3)), (0, -1)).shape
        (1, 2, 3, 1)
    """
    x = _as_tensor("expand_dims", x)
    shape = shape_of(x)
    axes = _int_sequence("expand_dims", "axis", axis)
    out_ndim = len(shape) + len(axes)
    positions = normalize_axis("expand_dims", axes, out_ndim)
    new_shape = []
    remaining = iter(shape)
    for i in range(out_ndim):
        new_shape.append(1 if i in positions else next(remaining))
    return ExpandDims(tuple(new_shape)).apply(x)


def squeeze(x, axis=None):
    """Remove axes of size 1: all of them, or those in ``axis`` (which must be 1)."""
    x = _as_tensor("squeeze", x)
    shape = shape_of(x)
    if axis is None:
        axes = tuple(i for i, size in enumerate(shape) if size == 1)
    else:
        axes = normalize_axis("squeeze", axis, len(shape))
        for a in axes:
            if shape[a] != 1:
                raise ValueError(
                    f"squeeze: cannot squeeze axis {a} of a tensor of shape {shape}: its size is {shape[a]}, not 1."
                )
    return Squeeze(tuple(size for i, size in enumerate(shape) if i not in axes)).apply(x)


def flatten(x):
    """``x`` as a 1-D tensor (the ``Flatten`` layer keeps the batch axis itself)."""
    x = _as_tensor("flatten", x)
    return Flatten((_size(shape_of(x)),)).apply(x)


ravel = flatten


def moveaxis(x, source, destination):
    """Move axes ``source`` to positions ``destination`` (ints or tuples)."""
    x = _as_tensor("moveaxis", x)
    ndim = len(shape_of(x))
    sources = _int_sequence("moveaxis", "source", source)
    destinations = _int_sequence("moveaxis", "destination", destination)
    if len(sources) != len(destinations):
        raise ValueError(
            f"moveaxis: source {source!r} and destination {destination!r} must name the same number of axes."
        )
    sources = [_single_axis("moveaxis", a, ndim) for a in sources]
    destinations = [_single_axis("moveaxis", a, ndim) for a in destinations]
    if len(set(sources)) != len(sources) or len(set(destinations)) != len(destinations):
        raise ValueError(f"moveaxis: repeated axis in source {source!r} or destination {destination!r}.")
    order = [a for a in range(ndim) if a not in sources]
    for dest, src in sorted(zip(destinations, sources)):
        order.insert(dest, src)
    return Transpose(tuple(order)).apply(x)


def swapaxes(x, axis1, axis2):
    """Exchange two axes of ``x``."""
    x = _as_tensor("swapaxes", x)
    ndim = len(shape_of(x))
    first, second = _single_axis("swapaxes", axis1, ndim), _single_axis("swapaxes", axis2, ndim)
    order = list(range(ndim))
    order[first], order[second] = second, first
    return Transpose(tuple(order)).apply(x)


# ---------------------------------------------------------------- indexing
class GetItem(Function):
    """``x[index]``. ``index`` is a tuple of ints, slices, None, Ellipsis and
    arrays; ``checks`` lists (position, axis size) of the integer arrays,
    whose bounds are checked on the device in forward."""

    def __init__(self, index, checks, kind):
        self.index, self.checks, self.kind = index, checks, kind

    def forward(self, x):
        xp = self.device.xp
        index = tuple(self.device.asarray(item) if backend.is_array(item) else item for item in self.index)
        for position, axis, size in self.checks:
            index = _checked_array(self.device, index, position, axis, size, x.shape)
        self.index = index
        self.input_shape, self.input_dtype = x.shape, x.dtype
        out = x[index]
        if not self.device.is_array(out):
            out = xp.asarray(out)  # NumPy gives a scalar for a single element
        return out

    def backward(self, grad):
        xp = self.device.xp
        shape, index = self.input_shape, self.index
        if self.kind == "rows":
            rows = xp.ascontiguousarray(grad).reshape(index[0].size, _size(shape[1:]))
            return _scatter_add_rows(self.device, index[0].reshape(-1), rows, shape[0]).reshape(shape)
        grad_input = xp.zeros(shape, dtype=grad.dtype)
        if self.kind == "basic":
            grad_input[index] = grad  # each element is picked at most once
            return grad_input
        # Integer arrays may pick an element several times: scatter-add at the
        # flat positions of the picked elements.
        positions = xp.arange(_size(shape)).reshape(shape)[index]
        self.device.scatter_add(grad_input.reshape(-1), positions.reshape(-1), xp.ascontiguousarray(grad).reshape(-1))
        return grad_input


def _checked_array(device, index, position, axis, size, shape):
    """Raise IndexError naming the shape when an integer array is out of
    range; wrap negative entries so that the gradient scatter can use them."""
    array = index[position]
    if array.size == 0:
        return index
    low, high = device.bounds(array)  # one transfer for both bounds
    if low < -size or high >= size:
        bad = low if low < -size else high
        raise IndexError(
            f"getitem: index {bad} is out of range for axis {axis} of size {size} (tensor shape {shape})."
        )
    if low < 0:
        array = device.xp.where(array < 0, array + size, array)
        index = index[:position] + (array,) + index[position + 1:]
    return index


def _normalize_index(index, shape):
    """Check ``index`` against ``shape``; return (items, checks, kind)."""
    items = index if isinstance(index, tuple) else (index,)
    normalized = []
    for item in items:
        if isinstance(item, Tensor):
            item = item.data
        if isinstance(item, (list, tuple, bool, numpy.bool_)):
            item = numpy.asarray(item)
            if item.size == 0 and item.dtype.kind == "f":
                item = item.astype(numpy.intp)  # ``x[[]]``
        elif _is_int(item):
            item = int(item)
        elif isinstance(item, numpy.ndarray) or backend.is_array(item):
            pass
        elif not (item is None or item is Ellipsis or isinstance(item, slice)):
            raise TypeError(
                f"getitem: index items must be ints, slices, None, Ellipsis, or integer or boolean arrays; "
                f"received {type(item).__name__} {item!r}."
            )
        if backend.is_array(item) and item.dtype.kind not in "biu":
            raise TypeError(f"getitem: index arrays must be integer or boolean, received dtype {item.dtype}.")
        normalized.append(item)
    ndim = len(shape)
    if sum(item is Ellipsis for item in normalized) > 1:
        raise IndexError("getitem: an index can only have a single Ellipsis (...).")
    consumed = 0
    for item in normalized:
        if backend.is_array(item):
            consumed += item.ndim if item.dtype.kind == "b" else 1
        elif item is not None and item is not Ellipsis:
            consumed += 1
    if consumed > ndim:
        raise IndexError(f"getitem: too many indices ({consumed}) for a tensor of shape {shape}.")
    checks, axis, has_int_array = [], 0, False
    for position, item in enumerate(normalized):
        if item is Ellipsis:
            axis += ndim - consumed
        elif item is None:
            continue
        elif isinstance(item, int):
            if not -shape[axis] <= item < shape[axis]:
                raise IndexError(
                    f"getitem: index {item} is out of range for axis {axis} of size {shape[axis]} "
                    f"(tensor shape {shape})."
                )
            axis += 1
        elif isinstance(item, slice):
            if item.step == 0:
                raise ValueError("getitem: slice step cannot be zero.")
            axis += 1
        elif item.dtype.kind == "b":
            expected = shape[axis:axis + item.ndim]
            if tuple(item.shape) != expected:
                raise IndexError(
                    f"getitem: boolean mask of shape {tuple(item.shape)} does not match axes {expected} "
                    f"of the tensor of shape {shape}."
                )
            axis += item.ndim
        else:
            checks.append((position, axis, shape[axis]))
            has_int_array = True
            axis += 1
    if not has_int_array:
        kind = "basic"
    elif (backend.is_array(normalized[0]) and normalized[0].dtype.kind != "b"
          and all(isinstance(item, slice) and item == slice(None) for item in normalized[1:])):
        kind = "rows"  # x[indices]: the common gather, with a fast gradient
    else:
        kind = "advanced"
    return tuple(normalized), checks, kind


def getitem(x, index):
    """``x[index]`` with NumPy semantics (``Tensor.__getitem__`` calls this).

    Supports ints, slices (any step), None, Ellipsis, boolean masks and
    integer arrays, lists or Tensors (advanced indexing), and mixes of them.
    The gradient of elements picked several times accumulates.

    Raises:
        IndexError: an index is out of range for the tensor's shape.
        TypeError: an index item of an unsupported type.
    """
    x = _as_tensor("getitem", x)
    items, checks, kind = _normalize_index(index, shape_of(x))
    return GetItem(items, checks, kind).apply(x)


def take(x, indices, axis=None):
    """Elements of ``x`` at ``indices`` along ``axis`` (of the flattened ``x``
    when ``axis`` is None), like ``keras.ops.take``."""
    x = _as_tensor("take", x)
    if axis is None:
        x, axis = flatten(x), 0
    else:
        axis = _single_axis("take", axis, len(shape_of(x)))
    if isinstance(indices, (list, tuple)):
        indices = numpy.asarray(indices)
    validate_tensor_input("take", indices, allow_complex=False)
    dtype = getattr(indices, "dtype", None)
    if dtype is not None and numpy.dtype(dtype).kind == "b":
        # A mask selects along ``axis`` only; a wider one would index the
        # following axes too, silently ignoring ``axis``.
        length = shape_of(x)[axis]
        if shape_of(indices) != (length,):
            raise ValueError(f"take: a boolean mask must be 1-D with the length of axis {axis} ({length}), "
                             f"received mask shape {shape_of(indices)} for input shape {shape_of(x)}.")
    elif dtype is not None and numpy.dtype(dtype).kind == "f":
        raise TypeError(f"take: indices must be integers or a boolean mask, received dtype {dtype}.")
    with entry_point("take"):
        return getitem(x, (slice(None),) * axis + (indices,))


# ----------------------------------------------------- joining and splitting
class Concatenate(Function):
    """Inputs joined along an axis; the gradient is sliced back into pieces."""

    def __init__(self, axis):
        self.axis = axis

    def forward(self, *arrays):
        self.sizes = [a.shape[self.axis] for a in arrays]
        self.dtypes = [a.dtype for a in arrays]
        return self.device.xp.concatenate(arrays, axis=self.axis)

    def backward(self, grad):
        grads, start = [], 0
        index = [slice(None)] * grad.ndim
        for size, dtype, needed in zip(self.sizes, self.dtypes, self.needs_input_grad):
            if needed:
                index[self.axis] = slice(start, start + size)
                piece = grad[tuple(index)]
                grads.append(piece if piece.dtype == dtype else piece.astype(dtype))
            else:
                grads.append(None)
            start += size
        return tuple(grads)


class Stack(Function):
    """Inputs joined along a new axis; each gets its slice of the gradient."""

    def __init__(self, axis):
        self.axis = axis

    def forward(self, *arrays):
        self.dtypes = [a.dtype for a in arrays]
        return self.device.xp.stack(arrays, axis=self.axis)

    def backward(self, grad):
        lead = (slice(None),) * self.axis
        return tuple(
            (grad[lead + (i,)].astype(dtype, copy=False) if needed else None)
            for i, (dtype, needed) in enumerate(zip(self.dtypes, self.needs_input_grad))
        )


class Split(Function):
    """One input cut into several outputs; their gradients are joined back."""

    def __init__(self, boundaries, axis):
        self.boundaries, self.axis = boundaries, axis

    def forward(self, x):
        return tuple(self.device.xp.split(x, self.boundaries, axis=self.axis))

    def backward(self, *grads):
        # Pieces nobody used arrive as zeros (the engine fills them in).
        return self.device.xp.concatenate(grads, axis=self.axis)


def _tensor_list(op_name, tensors):
    if isinstance(tensors, (Tensor,)) or backend.is_array(tensors) or not isinstance(tensors, (list, tuple)):
        raise TypeError(f"{op_name} expects a list or tuple of tensors, received {type(tensors).__name__}.")
    if not tensors:
        raise ValueError(f"{op_name} needs at least one tensor, received an empty list.")
    for i, value in enumerate(tensors):
        if not (isinstance(value, Tensor) or backend.is_array(value)):
            raise TypeError(f"{op_name}: item {i} is a {type(value).__name__}, expected a Tensor or an array.")
        validate_tensor_input(op_name, value)
    return [shape_of(t) for t in tensors]


def concatenate(tensors, axis=0):
    """Join tensors along an existing ``axis``; the other axes must match."""
    shapes = _tensor_list("concatenate", tensors)
    ndim = len(shapes[0])
    if ndim == 0:
        raise ValueError("concatenate: cannot concatenate 0-d tensors; use stack.")
    axis = _single_axis("concatenate", axis, ndim)
    for i, shape in enumerate(shapes[1:], 1):
        if len(shape) != ndim or any(a != b for j, (a, b) in enumerate(zip(shape, shapes[0])) if j != axis):
            raise ValueError(
                f"concatenate: tensor {i} has shape {shape}, tensor 0 has shape {shapes[0]}; "
                f"they must match on every axis except axis {axis}."
            )
    return Concatenate(axis).apply(*tensors)


def stack(tensors, axis=0):
    """Join tensors of the same shape along a new ``axis``."""
    shapes = _tensor_list("stack", tensors)
    for i, shape in enumerate(shapes[1:], 1):
        if shape != shapes[0]:
            raise ValueError(f"stack: tensor {i} has shape {shape}, tensor 0 has {shapes[0]}; all must match.")
    axis = _single_axis("stack", axis, len(shapes[0]) + 1)
    return Stack(axis).apply(*tensors)


def split(x, indices_or_sections, axis=0):
    """Split ``x`` along ``axis`` into a list of tensors.

    Args:
        x: the tensor.
        indices_or_sections: a number of equal sections (must divide the
            axis), or a sorted list of split points (pieces may be uneven).
        axis: the axis to split.

    Returns:
        A list of Tensors; pieces left unused get a zero gradient.
    """
    x = _as_tensor("split", x)
    shape = shape_of(x)
    axis = _single_axis("split", axis, len(shape))
    size = shape[axis]
    if _is_int(indices_or_sections):
        sections = int(indices_or_sections)
        if sections <= 0 or size % sections:
            raise ValueError(
                f"split: cannot split axis {axis} of size {size} (shape {shape}) into {sections} equal sections; "
                "pass a list of split points for uneven pieces."
            )
        step = size // sections
        boundaries = [step * i for i in range(1, sections)]
    else:
        boundaries = list(indices_or_sections)
        if not all(_is_int(b) for b in boundaries) or any(
            not 0 <= b <= size for b in boundaries
        ) or boundaries != sorted(boundaries):
            raise ValueError(
                f"split: split points must be sorted ints in [0, {size}] for axis {axis} of shape {shape}, "
                f"received {indices_or_sections!r}."
            )
        boundaries = [int(b) for b in boundaries]
    return list(Split(boundaries, axis).apply(x))


# ---------------------------------------------------------------- repeating
class Tile(Function):
    """Whole copies of the input; the gradient sums the copies."""

    def __init__(self, repeats):
        self.repeats = repeats

    def forward(self, x):
        self.input_shape = x.shape
        return self.device.xp.tile(x, self.repeats)

    def backward(self, grad):
        # The output is (r0*s0, r1*s1, ...): view it as (r0, s0, r1, s1, ...)
        # and sum over the copies.
        shape = (1,) * (len(self.repeats) - len(self.input_shape)) + tuple(self.input_shape)
        repeats = (1,) * (len(shape) - len(self.repeats)) + tuple(self.repeats)
        interleaved = [n for pair in zip(repeats, shape) for n in pair]
        summed = grad.reshape(interleaved).sum(axis=tuple(range(0, 2 * len(shape), 2)))
        return summed.reshape(self.input_shape)


class Repeat(Function):
    """Each element repeated; the gradient sums each element's repeats."""

    def __init__(self, repeats, axis):
        self.repeats, self.axis = repeats, axis

    def forward(self, x):
        self.input_shape = x.shape
        xp = self.device.xp
        if self.axis is None:
            return xp.repeat(x.reshape(-1), self.repeats)
        return xp.repeat(x, self.repeats, axis=self.axis)

    def backward(self, grad):
        xp = self.device.xp
        axis = 0 if self.axis is None else self.axis
        shape = (_size(self.input_shape),) if self.axis is None else self.input_shape
        if isinstance(self.repeats, int):
            split_shape = shape[:axis] + (shape[axis], self.repeats) + shape[axis + 1:]
            summed = grad.reshape(split_shape).sum(axis=axis + 1)
        else:
            owners = self.device.asarray(numpy.repeat(numpy.arange(shape[axis]), self.repeats))
            summed = _scatter_add_axis(self.device, grad, owners, shape[axis], axis)
        return summed.reshape(self.input_shape)


def tile(x, repeats):
    """Repeat the whole of ``x`` ``repeats`` times along each axis (like ``numpy.tile``)."""
    x = _as_tensor("tile", x)
    repeats = _int_sequence("tile", "repeats", repeats)
    if not all(r >= 0 for r in repeats):
        raise ValueError(f"tile: repeats must be non-negative ints, received {repeats!r}.")
    return Tile(tuple(int(r) for r in repeats)).apply(x)


def repeat(x, repeats, axis=None):
    """Repeat each element ``repeats`` times along ``axis`` (of the flattened
    ``x`` when ``axis`` is None). ``repeats`` is an int or one count per element."""
    x = _as_tensor("repeat", x)
    shape = shape_of(x)
    if axis is not None:
        axis = _single_axis("repeat", axis, len(shape))
    size = _size(shape) if axis is None else shape[axis]
    if isinstance(repeats, Tensor) or backend.is_array(repeats):
        repeats = to_host(getattr(repeats, "data", repeats)).tolist()
    if _is_int(repeats):
        if repeats < 0:
            raise ValueError(f"repeat: repeats must be non-negative, received {repeats}.")
        repeats = int(repeats)
    else:
        repeats = list(_int_sequence("repeat", "repeats", repeats))
        if len(repeats) == 1:
            repeats = repeats[0]
            return repeat(x, repeats, axis)
        if len(repeats) != size or not all(_is_int(r) and r >= 0 for r in repeats):
            raise ValueError(
                f"repeat: repeats must be an int or {size} non-negative ints (one per element along the axis "
                f"of shape {shape}), received {repeats!r}."
            )
        repeats = [int(r) for r in repeats]
    return Repeat(repeats, axis).apply(x)


# ------------------------------------------------------------------ padding
_INDEX_PAD_MODES = ("reflect", "symmetric", "edge", "wrap")


class ConstantPad(Function):
    """Padding with a constant; the gradient is the un-padded middle."""

    def __init__(self, pad_width, value):
        self.pad_width, self.value = pad_width, value

    def forward(self, x):
        self.input_shape = x.shape
        return self.device.xp.pad(x, self.pad_width, mode="constant", constant_values=self.value)

    def backward(self, grad):
        return grad[tuple(slice(before, before + size) for (before, _), size in zip(self.pad_width, self.input_shape))]


class IndexPad(Function):
    """Padding that copies elements (reflect, symmetric, edge, wrap): one
    gather per padded axis; the gradient scatter-adds back axis by axis."""

    def __init__(self, sources):
        self.sources = sources  # axis -> host index array into the input axis

    def forward(self, x):
        self.input_shape = x.shape
        xp = self.device.xp
        for axis, source in self.sources.items():
            x = xp.take(x, self.device.asarray(source), axis=axis)
        return x

    def backward(self, grad):
        xp = self.device.xp
        for axis, source in reversed(list(self.sources.items())):
            grad = _scatter_add_axis(self.device, grad, self.device.asarray(source), self.input_shape[axis], axis)
        return grad


def _pad_pairs(pad_width, ndim):
    """``pad_width`` as one (before, after) pair of ints per axis."""
    try:
        array = numpy.asarray(pad_width)
    except ValueError:  # ragged nesting
        array = numpy.asarray(0.5)
    pairs = None
    if array.dtype.kind in "iu":
        if array.size == 1:
            pairs = numpy.full((ndim, 2), int(array.reshape(())))
        elif array.shape in ((2,), (1, 2)):
            pairs = numpy.broadcast_to(array.reshape(1, 2), (ndim, 2))
        elif array.shape == (ndim, 2):
            pairs = array
    if pairs is None:
        raise ValueError(
            f"pad: pad_width must be an int, a (before, after) pair, or one pair per axis ({ndim} axes); "
            f"received {pad_width!r}."
        )
    if (pairs < 0).any():
        raise ValueError(f"pad: pad widths must be non-negative, received {pad_width!r}.")
    return tuple((int(before), int(after)) for before, after in pairs)


def pad(x, pad_width, mode="constant", constant_values=0):
    """Pad ``x`` (``pad_width`` as in ``numpy.pad``).

    Args:
        x: the tensor.
        pad_width: an int, a ``(before, after)`` pair for every axis, or one
            pair per axis.
        mode: "constant", or "reflect", "symmetric", "edge", "wrap".
        constant_values: the fill value of "constant" mode (a number).
    """
    x = _as_tensor("pad", x)
    shape = shape_of(x)
    pairs = _pad_pairs(pad_width, len(shape))
    if not pairs:
        return reshape(x, shape)  # a 0-d tensor has no axis to pad, as in numpy.pad
    if mode == "constant":
        if not isinstance(constant_values, (int, float, numpy.number)):
            raise TypeError(f"pad: constant_values must be a number, received {constant_values!r}.")
        return ConstantPad(pairs, constant_values).apply(x)
    if mode not in _INDEX_PAD_MODES:
        raise ValueError(f"pad: mode must be 'constant' or one of {_INDEX_PAD_MODES}, received {mode!r}.")
    sources = {}
    for axis, ((before, after), size) in enumerate(zip(pairs, shape)):
        if before or after:
            if size == 0:
                raise ValueError(f"pad: cannot pad empty axis {axis} of shape {shape} in mode {mode!r}.")
            sources[axis] = numpy.pad(numpy.arange(size), (before, after), mode=mode)
    return IndexPad(sources).apply(x)


# -------------------------------------------------------------------- dtype
class Cast(Function):
    """A dtype conversion; the gradient is converted back to the input dtype."""

    def __init__(self, dtype):
        self.dtype = dtype

    def forward(self, x):
        self.input_dtype = x.dtype
        return x.astype(self.dtype, copy=False)

    def backward(self, grad):
        return grad.astype(self.input_dtype, copy=False)


def cast(x, dtype):
    """``x`` converted to ``dtype``. The gradient is cast back to the input's
    dtype; casting to an integer or bool dtype cuts the gradient."""
    x = _as_tensor("cast", x)
    try:
        dtype = numpy.dtype(dtype)
    except TypeError:
        raise TypeError(f"cast: {dtype!r} is not a dtype.") from None
    check_dtype("cast", dtype)
    if dtype.kind not in "fc" and isinstance(x, Tensor) and x.requires_grad:
        with no_grad():
            return Cast(dtype).apply(x)
    return Cast(dtype).apply(x)
