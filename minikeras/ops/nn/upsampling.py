"""Upsampling by integer factors along the spatial axes of a channels-last
input: nearest (repeat) and bilinear (TensorFlow's half-pixel-centre
resize, one interpolation matrix per axis)."""
import numpy

from minikeras.autograd import Function
from minikeras._support.argument_validation import as_tensor

__all__ = ["upsample"]


class NearestUpsample(Function):
    """Each spatial element repeated ``factors`` times per axis (NHWC or NWC)."""

    def __init__(self, factors):
        self.factors = factors

    def _interleaved(self, shape):
        # (N, d1, 1, d2, 1, ..., C): a factor axis after each spatial axis.
        sizes = [shape[0]]
        for size, factor in zip(shape[1:-1], self.factors):
            sizes += [size, factor]
        return sizes + [shape[-1]]

    def forward(self, x):
        xp = self.device.xp
        self.input_shape = x.shape
        expanded = self._interleaved(x.shape)
        view = x.reshape([1 if i % 2 == 0 and 0 < i < len(expanded) - 1 else s for i, s in enumerate(expanded)])
        out_shape = (x.shape[0],) + tuple(s * f for s, f in zip(x.shape[1:-1], self.factors)) + (x.shape[-1],)
        return xp.broadcast_to(view, expanded).reshape(out_shape)

    def backward(self, grad):
        expanded = self._interleaved(self.input_shape)
        factor_axes = tuple(range(2, len(expanded) - 1, 2))
        return grad.reshape(expanded).sum(axis=factor_axes)


def _bilinear_matrix(in_size, factor):
    """(in_size * factor, in_size) weights of TensorFlow's half-pixel-centre
    bilinear resize along one axis (no antialiasing)."""
    out_size = in_size * factor
    source = (numpy.arange(out_size) + 0.5) / factor - 0.5
    floor = numpy.floor(source)
    lerp = source - floor
    lower = numpy.clip(floor, 0, in_size - 1).astype(int)
    upper = numpy.clip(floor + 1, 0, in_size - 1).astype(int)
    matrix = numpy.zeros((out_size, in_size))
    rows = numpy.arange(out_size)
    numpy.add.at(matrix, (rows, lower), 1.0 - lerp)
    numpy.add.at(matrix, (rows, upper), lerp)
    return matrix


class BilinearUpsample(Function):
    """One interpolation matrix applied per spatial axis of an NHWC input."""

    def __init__(self, factors):
        self.factors = factors

    def _matrices(self, xp, shape, dtype):
        return [xp.asarray(_bilinear_matrix(size, factor).astype(dtype))
                for size, factor in zip(shape[1:-1], self.factors)]

    def forward(self, x):
        xp = self.device.xp
        self.input_shape = x.shape
        out = x
        for axis, matrix in enumerate(self._matrices(xp, x.shape, x.dtype), 1):
            out = xp.moveaxis(xp.tensordot(out, matrix, axes=([axis], [1])), -1, axis)
        return xp.ascontiguousarray(out)

    def backward(self, grad):
        xp = self.device.xp
        for axis, matrix in enumerate(self._matrices(xp, self.input_shape, grad.dtype), 1):
            grad = xp.moveaxis(xp.tensordot(grad, matrix, axes=([axis], [0])), -1, axis)
        return xp.ascontiguousarray(grad)



def upsample(x, size, interpolation="nearest"):
    """Enlarge the spatial axes of ``x`` ``(batch, *spatial, channels)`` by
    the integer factors ``size`` (one per spatial axis).

    Args:
        x: a Tensor of rank ``len(size) + 2``.
        size: a tuple of positive ints.
        interpolation: "nearest" or "bilinear".

    Raises:
        ValueError: a bad factor, rank or interpolation.
    """
    x = as_tensor("upsample", x, allow_bool=False, allow_complex=False)
    if not isinstance(size, (tuple, list)):
        raise ValueError(f"upsample: size must be a tuple of positive ints, received {size!r}.")
    size = tuple(size)
    if not size or any(isinstance(f, bool) or not isinstance(f, (int, numpy.integer)) or f <= 0 for f in size):
        raise ValueError(f"upsample: size must be a tuple of positive ints, received {size!r}.")
    if x.ndim != len(size) + 2:
        raise ValueError(f"upsample: x must have rank {len(size) + 2} (batch, *spatial, channels) for size {size}, "
                         f"received shape {tuple(x.shape)}.")
    if interpolation == "bilinear":
        return BilinearUpsample(tuple(int(f) for f in size)).apply(x)
    if interpolation == "nearest":
        return NearestUpsample(tuple(int(f) for f in size)).apply(x)
    raise ValueError(f"upsample: interpolation must be 'nearest' or 'bilinear', received {interpolation!r}.")
