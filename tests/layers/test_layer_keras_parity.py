"""Forward parity with Keras 3 on copied weights, for the layers added for
issue 13: against outputs recorded from Keras (``keras_layer_cases.py``
writes them; runs in CI without TensorFlow), and against live Keras where
it is installed."""
import numpy
import pytest

from minikeras import layers
from tests.layers.keras_layer_cases import CASES, FIXTURE, build_layer, call_case, keras_output

TOLERANCE = {"atol": 2e-5, "rtol": 2e-4}


def minikeras_output(name, weights):
    class_name, config, inputs, call_kwargs = CASES[name]
    layer = build_layer(layers, class_name, config)
    call_case(layer, inputs, call_kwargs)
    assert len(layer.weights) == len(weights), f"{class_name}: weight count differs from Keras"
    layer.set_weights(weights)
    return call_case(layer, inputs, call_kwargs).numpy()


@pytest.fixture(scope="module")
def recorded():
    with numpy.load(FIXTURE) as data:
        return {key: data[key] for key in data.files}


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_recorded_keras_output(name, recorded):
    assert f"{name}/output" in recorded, f"case {name} is not recorded: rerun keras_layer_cases.py"
    index, weights = 0, []
    while f"{name}/weight{index}" in recorded:
        weights.append(recorded[f"{name}/weight{index}"])
        index += 1
    numpy.testing.assert_allclose(minikeras_output(name, weights), recorded[f"{name}/output"], **TOLERANCE)


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_live_keras_output(name):
    pytest.importorskip("tensorflow")
    pytest.importorskip("keras")
    expected, weights = keras_output(name)
    numpy.testing.assert_allclose(minikeras_output(name, weights), expected, **TOLERANCE)
