"""Files written by minikeras before the Keras 3 formats existed keep loading."""
import os

import numpy
import pytest

import minikeras as mk
from minikeras import layers

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures")


@pytest.fixture(scope="module")
def expected():
    return dict(numpy.load(os.path.join(FIXTURES, "minikeras_v1_outputs.npz")))


def test_v1_sequential_model_loads_compiled_with_its_optimizer_state(expected):
    model = mk.models.load_model(os.path.join(FIXTURES, "minikeras_v1_model.h5"))
    numpy.testing.assert_allclose(model.predict(expected["x"], verbose=0), expected["sequential"], rtol=0, atol=1e-6)
    assert int(model.optimizer.iterations) == int(expected["iterations"])
    assert [layer.name for layer in model.layers] == ["hidden", "norm", "head"]


def test_v1_functional_model_loads(expected):
    model = mk.models.load_model(os.path.join(FIXTURES, "minikeras_v1_functional.h5"))
    output = model.predict([expected["x"], expected["xb"]], verbose=0)
    numpy.testing.assert_allclose(output, expected["functional"], rtol=0, atol=1e-6)


def test_v1_weights_file_loads_into_a_model_built_in_code(expected):
    model = mk.Sequential([
        layers.Dense(8, activation="relu", input_shape=(4,)),
        layers.BatchNormalization(),
        layers.Dense(1),
    ])
    model.load_weights(os.path.join(FIXTURES, "minikeras_v1.weights.h5"))
    numpy.testing.assert_allclose(model.predict(expected["x"], verbose=0), expected["sequential"], rtol=0, atol=1e-6)
