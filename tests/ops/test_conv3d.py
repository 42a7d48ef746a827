"""conv3d, max_pool3d, avg_pool3d: against direct NumPy loops, gradients by
finite differences, errors."""
import itertools

import numpy
import pytest

from minikeras import ops
from tests.ops.op_check import check_op


def _padded(x, window, strides, padding, value=0.0):
    if padding == "valid":
        return x, [(0, 0)] * 3
    pads = []
    for size, k, s in zip(x.shape[1:4], window, strides):
        out = -(-size // s)
        total = max((out - 1) * s + k - size, 0)
        pads.append((total // 2, total - total // 2))
    return numpy.pad(x, [(0, 0)] + pads + [(0, 0)], constant_values=value), pads


def np_conv3d(x, kernel, strides=(1, 1, 1), padding="valid", dilation=(1, 1, 1)):
    effective = [(k - 1) * d + 1 for k, d in zip(kernel.shape[:3], dilation)]
    xp, _ = _padded(x, effective, strides, padding)
    out_shape = [(p - e) // s + 1 for p, e, s in zip(xp.shape[1:4], effective, strides)]
    out = numpy.zeros([x.shape[0]] + out_shape + [kernel.shape[-1]])
    for i, j, k in itertools.product(*(range(n) for n in out_shape)):
        patch = xp[:, i * strides[0]:i * strides[0] + effective[0]:dilation[0],
                   j * strides[1]:j * strides[1] + effective[1]:dilation[1],
                   k * strides[2]:k * strides[2] + effective[2]:dilation[2]]
        out[:, i, j, k] = numpy.einsum("nabcd,abcde->ne", patch, kernel)
    return out


def np_pool3d(x, window, strides, padding, kind):
    xp, _ = _padded(x, window, strides, padding, numpy.nan)
    out_shape = [(p - w) // s + 1 for p, w, s in zip(xp.shape[1:4], window, strides)]
    out = numpy.zeros([x.shape[0]] + out_shape + [x.shape[-1]])
    reduce = numpy.nanmax if kind == "max" else numpy.nanmean
    for i, j, k in itertools.product(*(range(n) for n in out_shape)):
        patch = xp[:, i * strides[0]:i * strides[0] + window[0], j * strides[1]:j * strides[1] + window[1],
                   k * strides[2]:k * strides[2] + window[2]]
        out[:, i, j, k] = reduce(patch, axis=(1, 2, 3))
    return out


@pytest.mark.parametrize("kernel_shape, strides, padding, dilation", [
    ((2, 2, 2), (1, 1, 1), "valid", (1, 1, 1)),
    ((3, 2, 3), (2, 1, 2), "same", (1, 1, 1)),
    ((2, 2, 2), (1, 1, 1), "same", (2, 1, 2)),
])
def test_conv3d(kernel_shape, strides, padding, dilation, rng):
    x = rng.normal(size=(2, 4, 5, 4, 2))
    kernel = rng.normal(size=kernel_shape + (2, 3))
    check_op(lambda a, k: ops.conv3d(a, k, strides, padding, dilation),
             lambda a, k: np_conv3d(a, k, strides, padding, dilation), [x, kernel])


@pytest.mark.parametrize("kind", ["max", "avg"])
@pytest.mark.parametrize("window, strides, padding", [((2, 2, 2), (2, 2, 2), "valid"), ((2, 3, 2), (1, 2, 1), "same"),
                                                      ((3, 3, 3), (2, 2, 2), "same")])
def test_pool3d(kind, window, strides, padding, rng):
    x = rng.normal(size=(2, 4, 5, 4, 2))
    op = ops.max_pool3d if kind == "max" else ops.avg_pool3d
    check_op(lambda a: op(a, window, strides, padding), lambda a: np_pool3d(a, window, strides, padding, kind), [x])


def test_errors(rng):
    x = rng.normal(size=(1, 3, 3, 3, 2)).astype("float32")
    with pytest.raises(ValueError, match="5-D input"):
        ops.conv3d(x[0], numpy.zeros((2, 2, 2, 2, 1), "float32"))
    with pytest.raises(ValueError, match="kernel"):
        ops.conv3d(x, numpy.zeros((2, 2, 2, 3, 1), "float32"))
    with pytest.raises(ValueError, match="larger than"):
        ops.conv3d(x, numpy.zeros((4, 2, 2, 2, 1), "float32"))
    with pytest.raises(ValueError, match="padding"):
        ops.max_pool3d(x, 2, padding="full")
    with pytest.raises(ValueError, match="pool_size"):
        ops.avg_pool3d(x, (2, 2))
