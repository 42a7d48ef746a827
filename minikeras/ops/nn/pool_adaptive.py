"""Adaptive average and max pooling: each output cell pools the input
window ``[floor(i L / n), ceil((i + 1) L / n))`` of its axis (PyTorch's and
Keras's bins), so any input length maps to a fixed output size.

Both are separable: pooling one spatial axis after another gives the pool
over the rectangle. An average is a matmul with a constant ``(n, L)``
averaging matrix (its gradient is the transposed matrix, through matmul);
a max stacks one ``max`` per bin (bins are few). Private to the
AdaptivePooling layers (``keras.ops.adaptive_*_pool`` belong to the ops
namespace).
"""
import math

import numpy

from minikeras import ops
from minikeras.autograd import Tensor

__all__ = []


def adaptive_bins(length, size):
    """The ``(start, stop)`` window of each of ``size`` output cells."""
    return [(math.floor(i * length / size), math.ceil((i + 1) * length / size)) for i in range(size)]


def _pool_axis(x, axis, size, mode):
    length = x.shape[axis]
    bins = adaptive_bins(length, size)
    if mode == "average":
        matrix = numpy.zeros((length, size), dtype=x.dtype)
        for column, (start, stop) in enumerate(bins):
            matrix[start:stop, column] = 1.0 / (stop - start)
        moved = ops.moveaxis(x, axis, -1)
        return ops.moveaxis(ops.matmul(moved, Tensor(matrix, device=x.device)), -1, axis)
    index = [slice(None)] * x.ndim
    pooled = []
    for start, stop in bins:
        index[axis] = slice(start, stop)
        pooled.append(ops.max(ops.getitem(x, tuple(index)), axis=axis))
    return ops.stack(pooled, axis=axis)


def _adaptive_pool(x, output_size, mode):
    """Pool the spatial axes of channels-last ``x`` to ``output_size``."""
    for axis, size in enumerate(output_size, start=1):
        if x.shape[axis] != size or mode == "max":
            x = _pool_axis(x, axis, size, mode)
    return x
