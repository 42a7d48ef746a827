"""Repeating: tile and repeat.

The gradient sums the copies back onto the element they came from.
"""

__all__ = ["tile", "repeat"]

import numpy

from minikeras import backend
from minikeras.autograd import Function, Tensor
from minikeras.device import to_host
from minikeras.ops._checks import shape_of
from minikeras.ops.array._common import _int_sequence, _scatter_add_axis, _single_axis, _size
from minikeras.ops.math._operands import _as_tensor
from minikeras._support.argument_validation import is_int as _is_int
from minikeras.autograd.tensor import array_of


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
        repeats = to_host(array_of(repeats)).tolist()
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
