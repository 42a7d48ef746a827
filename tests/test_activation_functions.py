"""minikeras.activations (the name -> function module; the ops themselves are
tested in tests/ops/test_activations.py). Named apart from that file because
pytest's default import mode needs unique test module basenames."""
import math

import numpy
import pytest

from minikeras import activations, ops
from minikeras.autograd import Tensor, gradcheck

X = numpy.array([-5.0, -2.5, -1.0, -0.3, 0.4, 1.0, 2.0, 7.0])


def _sigmoid(x):
    return 1 / (1 + numpy.exp(-x))


def _erf(x):
    return numpy.array([math.erf(v) for v in numpy.ravel(x)]).reshape(numpy.shape(x))


REFERENCES = {
    "linear": lambda x: x,
    "relu": lambda x: numpy.maximum(x, 0),
    "relu6": lambda x: numpy.clip(x, 0, 6),
    "leaky_relu": lambda x: numpy.where(x > 0, x, 0.2 * x),
    "elu": lambda x: numpy.where(x > 0, x, numpy.expm1(x)),
    "selu": lambda x: 1.0507009873554805 * numpy.where(x > 0, x, 1.6732632423543772 * numpy.expm1(x)),
    "gelu": lambda x: 0.5 * x * (1 + _erf(x / math.sqrt(2))),
    "sigmoid": _sigmoid,
    "hard_sigmoid": lambda x: numpy.clip(x + 3, 0, 6) / 6,
    "tanh": numpy.tanh,
    "softmax": lambda x: numpy.exp(x - x.max()) / numpy.exp(x - x.max()).sum(),
    "log_softmax": lambda x: x - x.max() - numpy.log(numpy.exp(x - x.max()).sum()),
    "softplus": lambda x: numpy.log1p(numpy.exp(x)),
    "softsign": lambda x: x / (1 + numpy.abs(x)),
    "silu": lambda x: x * _sigmoid(x),
    "swish": lambda x: x * _sigmoid(x),
    "exponential": numpy.exp,
    "mish": lambda x: x * numpy.tanh(numpy.log1p(numpy.exp(x))),
}


@pytest.mark.parametrize("name", sorted(REFERENCES))
def test_named_activation_matches_reference(name):
    fn = activations.get(name)
    out = fn(Tensor(X.astype("float32")))
    assert out.dtype == numpy.float32
    numpy.testing.assert_allclose(out.numpy(), REFERENCES[name](X), rtol=2e-5, atol=2e-6)


@pytest.mark.parametrize("name", ["relu", "elu", "selu", "gelu", "sigmoid", "tanh", "softmax", "softplus", "silu",
                                  "mish", "leaky_relu"])
def test_gradcheck_through_named_activation(name):
    fn = activations.get(name)
    gradcheck(lambda x: fn(x), [X.reshape(2, 4)])


def test_none_is_linear_and_returns_the_same_tensor():
    x = Tensor(X)
    assert activations.get(None) is activations.linear
    assert activations.get(None)(x) is x


def test_relu_keras_variants():
    x = Tensor(numpy.linspace(-3, 3, 7))
    # Keras: threshold zeroes below it, max_value clips, negative_slope slopes below threshold.
    out = activations.relu(x, negative_slope=0.1, max_value=2.0, threshold=0.5).numpy()
    numpy.testing.assert_allclose(out, [-0.35, -0.25, -0.15, -0.05, 1.0, 2.0, 2.0])
    numpy.testing.assert_allclose(activations.relu(x, max_value=6).numpy(), numpy.clip(x.numpy(), 0, 6))
    numpy.testing.assert_allclose(activations.relu(x, negative_slope=0.5).numpy(),
                                  numpy.where(x.numpy() > 0, x.numpy(), 0.5 * x.numpy()))


def test_serialize_gives_names_and_round_trips():
    for name in REFERENCES:
        fn = activations.get(name)
        assert activations.get(activations.serialize(fn)) is fn
    assert activations.serialize(activations.swish) == "silu"
    assert activations.serialize(None) == "linear"
    # The ops functions map to the activation of the same name.
    assert activations.get(ops.relu) is activations.relu
    assert activations.serialize(ops.softmax) == "softmax"


def test_custom_callable_passes_through_and_deserializes_with_custom_objects():
    def double(x):
        return x * 2.0

    assert activations.get(double) is double
    assert activations.serialize(double) == "double"
    assert activations.deserialize("double", custom_objects={"double": double}) is double


def test_unknown_name_is_named_and_known_ones_listed():
    with pytest.raises(ValueError, match=r"Unknown activation 'rellu'.*'relu'"):
        activations.get("rellu")
    with pytest.raises(ValueError, match="Could not interpret activation"):
        activations.get(3)
