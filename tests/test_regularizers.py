"""Regularizers: values, gradients, dtype, configs and lookup."""
import numpy
import pytest

from minikeras import regularizers
from minikeras.autograd import Tensor, gradcheck


@pytest.fixture
def weight(rng):
    return rng.standard_normal((4, 3)).astype("float32")


def test_values_match_keras_formulas(weight):
    tensor = Tensor(weight)
    assert regularizers.L2(0.1)(tensor).item() == pytest.approx(0.1 * (weight ** 2).sum(), rel=1e-6)
    assert regularizers.L1(0.2)(tensor).item() == pytest.approx(0.2 * numpy.abs(weight).sum(), rel=1e-6)
    both = regularizers.L1L2(l1=0.2, l2=0.1)(tensor).item()
    assert both == pytest.approx(0.2 * numpy.abs(weight).sum() + 0.1 * (weight ** 2).sum(), rel=1e-6)
    assert regularizers.L1L2()(tensor).item() == 0.0


def test_result_is_a_scalar_of_the_weight_dtype(weight):
    penalty = regularizers.L2()(Tensor(weight))
    assert penalty.shape == () and penalty.dtype == numpy.float32
    assert regularizers.L2()(Tensor(weight.astype("float64"))).dtype == numpy.float64


def test_keras_default_factors():
    assert regularizers.get("l1").l1 == 0.01
    assert regularizers.get("l2").l2 == 0.01
    l1_l2 = regularizers.get("l1_l2")
    assert (l1_l2.l1, l1_l2.l2) == (0.0, 0.0)


def test_gradient_flows_to_the_weight(weight):
    tensor = Tensor(weight, requires_grad=True)
    regularizers.L1L2(l1=0.3, l2=0.5)(tensor).backward()
    numpy.testing.assert_allclose(tensor.grad.numpy(), 0.3 * numpy.sign(weight) + 2 * 0.5 * weight, rtol=1e-6)


@pytest.mark.parametrize("regularizer", [regularizers.L1(0.3), regularizers.L2(0.7), regularizers.L1L2(0.2, 0.4)])
def test_gradcheck(rng, regularizer):
    # Values away from 0, where |x| is not differentiable.
    values = rng.uniform(0.2, 1.0, (3, 2)) * rng.choice([-1, 1], (3, 2))
    gradcheck(lambda w: regularizer(w), [values])


@pytest.mark.parametrize("regularizer", [regularizers.L1(0.3), regularizers.L2(0.7), regularizers.L1L2(0.2, 0.4)])
def test_config_round_trip(regularizer, weight):
    config = regularizers.serialize(regularizer)
    rebuilt = regularizers.get(config)
    assert type(rebuilt) is type(regularizer) and rebuilt.get_config() == regularizer.get_config()
    assert rebuilt(Tensor(weight)).item() == regularizer(Tensor(weight)).item()


def test_get_accepts_none_instances_classes_and_callables():
    assert regularizers.get(None) is None
    instance = regularizers.L2(0.5)
    assert regularizers.get(instance) is instance
    assert isinstance(regularizers.get(regularizers.L1), regularizers.L1)

    def custom(w):
        return w.sum()

    assert regularizers.get(custom) is custom
    assert regularizers.deserialize("custom", custom_objects={"custom": custom}) is custom


def test_bad_input_raises():
    with pytest.raises(ValueError, match="Unknown regularizer 'l3'.*l1_l2"):
        regularizers.get("l3")
    with pytest.raises(ValueError, match="non-negative"):
        regularizers.L2(-0.1)
    with pytest.raises(TypeError, match="number"):
        regularizers.L1("a lot")
    with pytest.raises(ValueError, match="Could not interpret"):
        regularizers.get(3)
    with pytest.raises(TypeError, match="floating-point"):
        regularizers.L2()(Tensor(numpy.arange(3)))


def test_repr_shows_the_config_for_every_configurable_kind():
    from minikeras import constraints, initializers, regularizers

    for obj in (regularizers.L1L2(l1=0.5, l2=0.25), constraints.MaxNorm(max_value=3.0),
                initializers.Constant(value=2.0)):
        assert repr(obj).startswith(type(obj).__name__ + "(")
        for key, value in obj.get_config().items():
            assert f"{key}={value!r}" in repr(obj)
        assert type(obj).from_config(obj.get_config()).get_config() == obj.get_config()
