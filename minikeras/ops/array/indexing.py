"""Indexing: ``x[index]`` (getitem) and take.

An index that may pick an element more than once (integer arrays)
scatter-adds its gradient, so repeated picks accumulate.
"""

__all__ = ["getitem", "take"]

import numpy

from minikeras import backend
from minikeras.autograd import Function, Tensor
from minikeras.backend.dtypes import is_float_dtype
from minikeras.ops._checks import shape_of
from minikeras.ops.array._common import _scatter_add_rows, _single_axis, _size
from minikeras.ops.array.reshaping import flatten
from minikeras.ops.math._operands import _as_tensor
from minikeras._support.argument_validation import entry_point, validate_tensor_input
from minikeras._support.argument_validation import is_int as _is_int


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
    elif dtype is not None and is_float_dtype(dtype):
        raise TypeError(f"take: indices must be integers or a boolean mask, received dtype {dtype}.")
    with entry_point("take"):
        return getitem(x, (slice(None),) * axis + (indices,))


def _take_in_range(x, indices, axis):
    """``take`` for integer ``indices`` an op computed itself, known to lie
    in ``[0, x.shape[axis])``: no transfer to read their bounds back (user
    ids are checked: CuPy would wrap one out of range)."""
    x = _as_tensor("take", x)
    items, _, kind = _normalize_index((slice(None),) * axis + (indices,), shape_of(x))
    return GetItem(items, [], kind).apply(x)
