"""Constraints: projections on raw arrays, dtype kept, configs and lookup."""
import numpy
import pytest

from minikeras import constraints


@pytest.fixture
def kernel(rng):
    return (rng.standard_normal((5, 4)) * 3).astype("float32")


def test_max_norm_caps_column_norms(kernel):
    out = constraints.MaxNorm(max_value=2.0)(kernel)
    assert out.dtype == numpy.float32
    norms = numpy.linalg.norm(out, axis=0)
    before = numpy.linalg.norm(kernel, axis=0)
    numpy.testing.assert_allclose(norms, numpy.minimum(before, 2.0), rtol=1e-5)
    # Directions are kept.
    numpy.testing.assert_allclose(out / norms, kernel / before, rtol=1e-5, atol=1e-6)


def test_max_norm_leaves_small_columns_alone():
    small = numpy.array([[0.1, 0.2], [0.3, 0.1]], "float32")
    numpy.testing.assert_allclose(constraints.MaxNorm(2)(small), small, rtol=1e-6)


def test_max_norm_over_several_axes_for_conv_kernels(rng):
    kernel = rng.standard_normal((3, 3, 2, 4)) * 5
    out = constraints.MaxNorm(1.0, axis=[0, 1, 2])(kernel)
    numpy.testing.assert_allclose(numpy.sqrt((out ** 2).sum(axis=(0, 1, 2))), 1.0, rtol=1e-6)


def test_non_neg_zeroes_negatives(kernel):
    out = constraints.get("non_neg")(kernel)
    numpy.testing.assert_array_equal(out, numpy.where(kernel < 0, 0, kernel))
    assert out.dtype == numpy.float32


def test_unit_norm(kernel):
    out = constraints.UnitNorm(axis=1)(kernel)
    numpy.testing.assert_allclose(numpy.linalg.norm(out, axis=1), 1.0, rtol=1e-5)


def test_min_max_norm(kernel):
    out = constraints.MinMaxNorm(min_value=1.0, max_value=1.5)(kernel)
    norms = numpy.linalg.norm(out, axis=0)
    assert numpy.all(norms >= 1.0 - 1e-5) and numpy.all(norms <= 1.5 + 1e-5)
    half = constraints.MinMaxNorm(min_value=0.0, max_value=1.0, rate=0.5)(kernel)
    before = numpy.linalg.norm(kernel, axis=0)
    numpy.testing.assert_allclose(numpy.linalg.norm(half, axis=0), 0.5 * numpy.minimum(before, 1) + 0.5 * before,
                                  rtol=1e-5)


def test_tensor_input_is_accepted(kernel):
    from minikeras.autograd import Tensor

    weight = Tensor(kernel)
    out = constraints.NonNeg()(weight)
    assert weight.device.is_array(out)  # a raw array of the weight's device
    numpy.testing.assert_array_equal(weight.device.to_host(out), numpy.maximum(kernel, 0))


@pytest.mark.parametrize("constraint", [constraints.MaxNorm(3, axis=1), constraints.NonNeg(),
                                        constraints.UnitNorm(axis=[0, 1]), constraints.MinMaxNorm(0.5, 2.0, 0.3)])
def test_config_round_trip(constraint, kernel):
    config = constraints.serialize(constraint)
    rebuilt = constraints.get(config)
    assert type(rebuilt) is type(constraint) and rebuilt.get_config() == constraint.get_config()
    numpy.testing.assert_array_equal(rebuilt(kernel), constraint(kernel))


def test_keras_names_and_defaults():
    assert isinstance(constraints.get("max_norm"), constraints.MaxNorm)
    assert constraints.get("max_norm").get_config() == {"max_value": 2, "axis": 0}
    assert isinstance(constraints.get("unit_norm"), constraints.UnitNorm)
    assert constraints.get(None) is None
    clip = lambda w: w.clip(-1, 1)  # noqa: E731
    assert constraints.get(clip) is clip


def test_bad_input_raises(kernel):
    with pytest.raises(ValueError, match="Unknown constraint 'maxnorm'.*max_norm"):
        constraints.get("maxnorm")
    with pytest.raises(ValueError, match="axis 2 is out of range"):
        constraints.MaxNorm(axis=2)(kernel)
    with pytest.raises(TypeError, match="axis"):
        constraints.UnitNorm(axis="rows")
    with pytest.raises(ValueError, match="min_value <= max_value"):
        constraints.MinMaxNorm(2.0, 1.0)
    with pytest.raises(ValueError, match="Could not interpret"):
        constraints.get(1.5)
