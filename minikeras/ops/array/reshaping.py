"""Ops that change the shape, not the elements: reshape, transpose,
expand_dims, squeeze, flatten (ravel), moveaxis, swapaxes.

Their gradients undo the move: reshape back, or transpose by the inverse
permutation.
"""

__all__ = ["reshape", "transpose", "expand_dims", "squeeze", "flatten", "ravel", "moveaxis", "swapaxes"]

import numpy

from minikeras.autograd import Function
from minikeras.ops._checks import normalize_axis, shape_of
from minikeras.ops.array._common import _int_sequence, _single_axis, _size
from minikeras.ops.math._operands import _as_tensor


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


def reshape(x, newshape):
    """Give ``x`` a new shape with the same number of elements (one -1 allowed)."""
    shape = newshape
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
    axes = tuple(a % max(ndim, 1) for a in _int_sequence("transpose", "axes", axes))
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
    if hasattr(axis, "shape") and getattr(axis, "ndim", 0) > 0:  # Keras: an int or a tuple, not a tensor
        raise TypeError(f"expand_dims: axis must be an int or a tuple of ints, received an array {axis!r:.60}.")
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
