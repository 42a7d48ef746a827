"""Joining and splitting: concatenate, stack, split.

The gradient of a join is the split of the incoming gradient, and the other
way round.
"""

__all__ = ["concatenate", "stack", "split"]

import numpy

from minikeras import backend
from minikeras.autograd import Function, Tensor
from minikeras.ops._checks import shape_of
from minikeras.ops._promotion import promote_all
from minikeras.ops.array._common import _single_axis
from minikeras.ops.math._operands import _as_tensor
from minikeras._support.argument_validation import is_int as _is_int
from minikeras._support.argument_validation import validate_tensor_input


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


class StackRows(Function):
    """The rows of one array joined along a new axis (``numpy.stack`` of an array)."""

    def __init__(self, axis):
        self.axis = axis

    def forward(self, x):
        return self.device.xp.moveaxis(x, 0, self.axis).copy()

    def backward(self, grad):
        return self.device.xp.moveaxis(grad, self.axis, 0)


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


def concatenate(xs, axis=0):
    """Join tensors along an existing ``axis``; the other axes must match."""
    tensors = xs
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
    return Concatenate(axis).apply(*promote_all(tensors))  # Keras's dtype rules


def rows_of(op_name, xs):
    """``xs`` as a list of what to join: a list or tuple as it is; a bare tensor or
    array (of at least one axis) as the list of its rows, as NumPy's and Keras's
    stacks iterate it; anything else refused."""
    if isinstance(xs, Tensor) or backend.is_array(xs):
        if len(shape_of(xs)) == 0:
            raise TypeError(f"{op_name} expects a list or tuple of tensors (or one tensor of rows), received a 0-d "
                            f"{type(xs).__name__}.")
        return [xs[i] for i in range(shape_of(xs)[0])]
    if not isinstance(xs, (list, tuple)):
        raise TypeError(f"{op_name} expects a list or tuple of tensors, received {type(xs).__name__} {xs!r:.60}.")
    return xs


def stack(x, axis=0):
    """Join tensors of the same shape along a new ``axis`` (numbers are 0-d tensors);
    one array or Tensor stacks its rows (its first axis), as ``numpy.stack`` and Keras do."""
    if (isinstance(x, Tensor) or backend.is_array(x)) and len(shape_of(x)) >= 1:
        rows = _as_tensor("stack", x)
        return StackRows(_single_axis("stack", axis, rows.ndim)).apply(rows)
    tensors = [_as_tensor("stack", item) if isinstance(item, (int, float, numpy.number)) and
               not isinstance(item, bool) else item for item in rows_of("stack", x)]
    shapes = _tensor_list("stack", tensors)
    for i, shape in enumerate(shapes[1:], 1):
        if shape != shapes[0]:
            raise ValueError(f"stack: tensor {i} has shape {shape}, tensor 0 has {shapes[0]}; all must match.")
    axis = _single_axis("stack", axis, len(shapes[0]) + 1)
    return Stack(axis).apply(*promote_all(tensors))  # Keras's dtype rules


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
        if not isinstance(indices_or_sections, (list, tuple)) and not (
                hasattr(indices_or_sections, "ndim") and indices_or_sections.ndim == 1):
            raise TypeError(f"split: indices_or_sections must be an int or a list of split points, received "
                            f"{type(indices_or_sections).__name__} {indices_or_sections!r}.")
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
