"""group_normalize: against a NumPy reference, float64 gradients, errors."""
import numpy
import pytest

from minikeras import ops
from tests.ops.op_check import check_op


def np_group_normalize(x, groups, axis=-1, epsilon=1e-3):
    moved = numpy.moveaxis(x, axis, -1)
    grouped = moved.reshape(moved.shape[0], -1, groups, moved.shape[-1] // groups)
    mean = grouped.mean(axis=(1, 3), keepdims=True)
    variance = grouped.var(axis=(1, 3), keepdims=True)
    normalized = ((grouped - mean) / numpy.sqrt(variance + epsilon)).reshape(moved.shape)
    return numpy.moveaxis(normalized, -1, axis)


@pytest.mark.parametrize("shape, groups, axis", [((2, 3, 3, 4), 2, -1), ((3, 6), 3, -1), ((2, 4, 5), 5, -1),
                                                  ((2, 4, 3, 3), 2, 1), ((2, 6), 1, 1)])
def test_group_normalize(shape, groups, axis, rng):
    x = rng.normal(1.0, 2.0, shape)
    check_op(lambda t: ops.group_normalize(t, groups, axis=axis),
             lambda a: np_group_normalize(a, groups, axis), [x])


def test_group_normalize_errors(rng):
    x = rng.normal(size=(2, 6)).astype("float32")
    with pytest.raises(ValueError, match="positive divisor of the 6 channels"):
        ops.group_normalize(x, 4)
    with pytest.raises(ValueError, match="batch"):
        ops.group_normalize(x[0], 2)
    with pytest.raises(TypeError, match="floating-point"):
        ops.group_normalize(numpy.ones((2, 6), "int32"), 2)
