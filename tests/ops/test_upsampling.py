"""ops.upsample: nearest and bilinear against NumPy references, float64
gradients, errors."""
import numpy
import pytest

from minikeras import ops
from tests.ops.op_check import check_op


def np_nearest(x, size):
    for axis, factor in enumerate(size, 1):
        x = numpy.repeat(x, factor, axis=axis)
    return x


def np_bilinear_axis(x, axis, factor):
    # TensorFlow's half-pixel centres: output i samples input (i + 0.5) / f - 0.5.
    n = x.shape[axis]
    out = []
    for i in range(n * factor):
        source = (i + 0.5) / factor - 0.5
        low = int(numpy.floor(source))
        weight = source - low
        a = numpy.take(x, min(max(low, 0), n - 1), axis=axis)
        b = numpy.take(x, min(max(low + 1, 0), n - 1), axis=axis)
        out.append((1 - weight) * a + weight * b)
    return numpy.stack(out, axis=axis)


@pytest.mark.parametrize("shape, size", [((2, 3, 4, 2), (2, 2)), ((1, 2, 3, 1), (3, 1)), ((2, 5, 3), (2,))])
def test_nearest(rng, shape, size):
    check_op(lambda t: ops.upsample(t, size), lambda a: np_nearest(a, size), [rng.normal(size=shape)])


@pytest.mark.parametrize("shape, size", [((2, 3, 4, 2), (2, 2)), ((1, 2, 3, 1), (3, 2))])
def test_bilinear(rng, shape, size):
    def reference(a):
        for axis, factor in enumerate(size, 1):
            a = np_bilinear_axis(a, axis, factor)
        return a

    check_op(lambda t: ops.upsample(t, size, "bilinear"), reference, [rng.normal(size=shape)])


def test_upsample_errors(rng):
    x = rng.normal(size=(1, 2, 2, 1))
    with pytest.raises(ValueError, match="upsample: size must be a tuple of positive ints"):
        ops.upsample(x, (0, 2))
    with pytest.raises(ValueError, match=r"upsample: x must have rank 3"):
        ops.upsample(x, (2,))
    with pytest.raises(ValueError, match="interpolation must be 'nearest' or 'bilinear', received 'cubic'"):
        ops.upsample(x, (2, 2), "cubic")
