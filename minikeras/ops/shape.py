"""Shape ops: reshape, transpose (more in this family are added alongside)."""

__all__ = ["reshape", "transpose"]

import numpy

from minikeras.autograd import Function
from minikeras.ops._checks import shape_of


class Reshape(Function):
    def __init__(self, shape):
        self.shape = shape

    def forward(self, x):
        self.input_shape = x.shape
        return x.reshape(self.shape)

    def backward(self, grad):
        return grad.reshape(self.input_shape)


class Transpose(Function):
    def __init__(self, axes):
        self.axes = axes

    def forward(self, x):
        return x.transpose(self.axes)

    def backward(self, grad):
        return grad.transpose(numpy.argsort(self.axes))


def reshape(x, shape):
    """Give ``x`` a new shape with the same number of elements (one -1 allowed)."""
    if isinstance(shape, (int, numpy.integer)):
        shape = (int(shape),)
    shape = tuple(int(s) for s in shape)
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
    ndim = len(shape_of(x))
    if axes is None:
        axes = tuple(reversed(range(ndim)))
    axes = tuple(int(a) % max(ndim, 1) for a in axes)
    if sorted(axes) != list(range(ndim)):
        raise ValueError(f"transpose: axes {axes} are not a permutation of the {ndim} axes of shape {shape_of(x)}.")
    return Transpose(axes).apply(x)
