"""Padding: pad with the constant, reflect, symmetric, edge and wrap modes.

Constant padding's gradient is a slice; the index modes pick elements more
than once and scatter-add their gradient.
"""

__all__ = ["pad"]

import numpy

from minikeras.autograd import Function
from minikeras.ops._checks import shape_of
from minikeras.ops.array._common import _scatter_add_axis
from minikeras.ops.array.reshaping import reshape
from minikeras.ops.math._operands import _as_tensor
from minikeras._support.argument_validation import is_option


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
    if not is_option(mode, ("constant",) + tuple(_INDEX_PAD_MODES)):
        raise ValueError(f"pad: mode must be 'constant' or one of {_INDEX_PAD_MODES}, received {mode!r:.60}.")
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
