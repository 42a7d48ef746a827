"""ops.batch_norm_training, ops.batch_norm_inference and ops.layer_norm:
NumPy references, float64 gradients, errors."""
import numpy
import pytest

import minikeras as mk
from minikeras import ops
from tests.ops.op_check import check_op


def np_normalize(x, axes, gamma, beta, epsilon, mean=None, variance=None):
    if mean is None:
        mean, variance = x.mean(axis=axes, keepdims=True), x.var(axis=axes, keepdims=True)
    out = (x - mean) / numpy.sqrt(variance + epsilon)
    return out * gamma + beta


def _feature_shape(shape, axis):
    return tuple(shape[a] if a == axis % len(shape) else 1 for a in range(len(shape)))


@pytest.mark.parametrize("shape, axis", [((8, 3), -1), ((4, 3, 3, 2), -1), ((4, 3, 5), 1)])
def test_batch_norm_training(rng, shape, axis):
    x = rng.normal(1.0, 2.0, shape)
    gamma, beta = rng.normal(size=shape[axis]), rng.normal(size=shape[axis])
    axes = tuple(a for a in range(len(shape)) if a != axis % len(shape))
    fshape = _feature_shape(shape, axis)
    check_op(lambda t, g, b: ops.batch_norm_training(t, g, b, axis, 1e-3)[0],
             lambda a, g, b: np_normalize(a, axes, g.reshape(fshape), b.reshape(fshape), 1e-3), [x, gamma, beta])


def test_batch_norm_training_returns_the_batch_statistics(rng):
    x = rng.normal(1.0, 2.0, (6, 2, 3))
    _, mean, variance = ops.batch_norm_training(mk.tensor(x), None, None, 1, 1e-3)
    device = mk.tensor(x).device
    numpy.testing.assert_allclose(device.to_host(mean), x.mean(axis=(0, 2)), rtol=1e-12)
    numpy.testing.assert_allclose(device.to_host(variance), x.var(axis=(0, 2)), rtol=1e-12)


def test_batch_norm_training_in_blocks_of_samples(rng, monkeypatch):
    # Small blocks make several of them on the CPU: same values, same gradients.
    from minikeras.backend import tuning

    monkeypatch.setattr(tuning, "BLOCK_ELEMENTS", 16)
    x = rng.normal(size=(9, 2, 4))
    gamma, beta = rng.normal(size=4), rng.normal(size=4)
    check_op(lambda t, g, b: ops.batch_norm_training(t, g, b, -1, 1e-3)[0],
             lambda a, g, b: np_normalize(a, (0, 1), g, b, 1e-3), [x, gamma, beta])


@pytest.mark.parametrize("shape, axis", [((5, 3), -1), ((2, 3, 4), 1)])
def test_batch_norm_inference(rng, shape, axis):
    x = rng.normal(size=shape)
    size = shape[axis]
    gamma, beta, mean = rng.normal(size=size), rng.normal(size=size), rng.normal(size=size)
    variance = rng.uniform(0.5, 2.0, size)
    fshape = _feature_shape(shape, axis)
    # The moving statistics get no gradient: constants of the op here.
    m, v = mk.tensor(mean), mk.tensor(variance)
    check_op(lambda t, g, b: ops.batch_norm_inference(t, g, b, m, v, axis, 1e-3),
             lambda a, g, b: np_normalize(a, None, g.reshape(fshape), b.reshape(fshape), 1e-3,
                                          mean.reshape(fshape), variance.reshape(fshape)),
             [x, gamma, beta], dtype_kept=False)  # float64 statistics promote, as any op


@pytest.mark.parametrize("shape, axes", [((4, 5), (1,)), ((2, 3, 4), (2,)), ((2, 3, 4), (1, 2)), ((2, 3, 4), (1,))])
def test_layer_norm(rng, shape, axes):
    x = rng.normal(1.0, 2.0, shape)
    pshape = tuple(shape[a] for a in axes)
    gamma, beta = rng.normal(size=pshape), rng.normal(size=pshape)
    bshape = tuple(shape[a] if a in axes else 1 for a in range(len(shape)))
    check_op(lambda t, g, b: ops.layer_norm(t, g, b, axes, 1e-3),
             lambda a, g, b: np_normalize(a, axes, g.reshape(bshape), b.reshape(bshape), 1e-3), [x, gamma, beta])


def test_layer_norm_without_scale_and_offset(rng):
    x = rng.normal(size=(3, 4))
    check_op(lambda t: ops.layer_norm(t, None, None, -1, 1e-3), lambda a: np_normalize(a, (1,), 1.0, 0.0, 1e-3), [x])


def test_normalization_errors(rng):
    x = rng.normal(size=(4, 3))
    with pytest.raises(ValueError, match="batch_norm_training: axis 0 must be a non-batch axis"):
        ops.batch_norm_training(x, None, None, 0, 1e-3)
    with pytest.raises(ValueError, match="batch_norm_inference: gamma must have 3 elements"):
        ops.batch_norm_inference(x, numpy.ones(2), None, numpy.zeros(3), numpy.ones(3), -1, 1e-3)
    with pytest.raises(TypeError, match="layer_norm expects a floating-point x, received dtype int32"):
        ops.layer_norm(numpy.ones((2, 3), "int32"), None, None, -1, 1e-3)
    with pytest.raises(ValueError, match="layer_norm: axis 5 must be a non-batch axis"):
        ops.layer_norm(x, None, None, 5, 1e-3)
