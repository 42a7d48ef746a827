"""Files written by real Keras 3 (tests/saving/make_keras_fixtures.py) load in minikeras
and reproduce Keras's outputs, before and after one more training step."""
import os

import numpy
import pytest

import minikeras as mk
from minikeras import layers
from tests.saving.keras_twins import TwoDense, model_params

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "keras")
MODELS = model_params(["conv_model", "recurrent_model", "two_heads", "two_dense", "keras3_layers"])
# The legacy .h5 cannot hold a subclassed model.
GRAPH_MODELS = model_params(["conv_model", "recurrent_model", "two_heads", "keras3_layers"])


CUSTOM = {"minikeras_tests>TwoDense": TwoDense}


def expected(name):
    data = numpy.load(os.path.join(FIXTURES, f"{name}.npz"))
    pick = lambda prefix: [data[key] for key in sorted(data.files) if key.startswith(prefix) and key[len(prefix):].isdigit()]  # noqa: E731
    return pick("x"), pick("y"), pick("after")


def predict(model, inputs):
    outputs = model.predict(inputs if len(inputs) > 1 else inputs[0], verbose=0)
    return outputs if isinstance(outputs, list) else [outputs]


def assert_close(actual, desired, atol=1e-5):
    assert len(actual) == len(desired)
    for a, d in zip(actual, desired):
        numpy.testing.assert_allclose(a, d, rtol=0, atol=atol)


def train_step_like_keras(model, inputs, outputs):
    targets = [numpy.zeros_like(output) for output in outputs]
    model.train_on_batch(inputs if len(inputs) > 1 else inputs[0], targets if len(targets) > 1 else targets[0])


@pytest.mark.parametrize("name", MODELS)
def test_keras_zip_reproduces_keras_outputs(name):
    inputs, outputs, _ = expected(name)
    model = mk.models.load_model(os.path.join(FIXTURES, f"{name}.keras"), custom_objects=CUSTOM)
    assert_close(predict(model, inputs), outputs)
    assert model.optimizer is not None and int(model.optimizer.iterations) == 1


def step_error(model, inputs, outputs, after):
    """Largest difference from Keras's outputs after one more Adam step from the loaded state."""
    train_step_like_keras(model, inputs, outputs)
    return max(float(numpy.abs(a - b).max()) for a, b in zip(predict(model, inputs), after))


# Adam's second step divides by the root of the running squared gradient, so
# float32 differences between two libraries' gradients grow to ~1e-4 in the
# outputs (BatchNormalization and RNNs most). A lost or misplaced optimizer
# state moves them 20x more than that (checked against a fresh Adam).
STEP_TOLERANCE = 5e-4


@pytest.mark.parametrize("name", MODELS)
def test_keras_zip_optimizer_state_continues_like_keras(name):
    inputs, outputs, after = expected(name)
    path = os.path.join(FIXTURES, f"{name}.keras")
    model = mk.models.load_model(path, custom_objects=CUSTOM)
    restored_error = step_error(model, inputs, outputs, after)
    assert restored_error < STEP_TOLERANCE
    assert int(model.optimizer.iterations) == 2
    fresh = mk.models.load_model(path, custom_objects=CUSTOM)
    fresh.compile(optimizer=mk.optimizers.Adam(0.01), loss="mse")  # same weights, no saved state
    assert step_error(fresh, inputs, outputs, after) > 20 * restored_error


@pytest.mark.parametrize("name", GRAPH_MODELS)
def test_legacy_h5_reproduces_keras_outputs_and_optimizer_state(name):
    inputs, outputs, after = expected(name)
    model = mk.models.load_model(os.path.join(FIXTURES, f"{name}.h5"))
    assert_close(predict(model, inputs), outputs)
    assert int(model.optimizer.iterations) == 1
    assert step_error(model, inputs, outputs, after) < STEP_TOLERANCE


@pytest.mark.parametrize("name", MODELS)
def test_weights_h5_loads_into_a_model_with_other_weights(name):
    inputs, outputs, after = expected(name)
    model = mk.models.load_model(os.path.join(FIXTURES, f"{name}.keras"), custom_objects=CUSTOM)
    for weight in model.weights:
        weight.assign(numpy.zeros(weight.shape, dtype=weight.dtype))
    model.load_weights(os.path.join(FIXTURES, f"{name}.weights.h5"))
    assert_close(predict(model, inputs), outputs)


def conv_model_in_code():
    """conv_model built with minikeras's API, other layer names: only the paths can match."""
    inputs = mk.Input((8, 8, 3))
    x = layers.Conv2D(4, 3, padding="same", activation="relu")(inputs)
    x = layers.DepthwiseConv2D(3, depth_multiplier=2)(x)
    x = layers.SeparableConv2D(4, 3, padding="same", depth_multiplier=2)(x)
    x = layers.Conv2DTranspose(3, 3, strides=2, padding="same")(x)
    x = layers.BatchNormalization()(x)
    x = layers.MaxPooling2D(2)(x)
    x = layers.Flatten()(x)
    return mk.Model(inputs, layers.Dense(5, activation="softmax")(x))


def test_weights_h5_loads_into_a_model_built_in_code_by_path():
    inputs, outputs, _ = expected("conv_model")
    model = conv_model_in_code()
    model.load_weights(os.path.join(FIXTURES, "conv_model.weights.h5"))
    assert_close(predict(model, inputs), outputs)


def test_legacy_h5_weights_load_into_a_model_built_in_code():
    inputs, outputs, _ = expected("conv_model")
    model = conv_model_in_code()
    model.load_weights(os.path.join(FIXTURES, "conv_model.h5"))
    assert_close(predict(model, inputs), outputs)


def test_shape_mismatch_names_the_weight_and_shapes_and_changes_nothing():
    wrong = mk.Sequential([mk.Input((8, 8, 3)), layers.Conv2D(5, 3, padding="same"), layers.Flatten(),
                           layers.Dense(5)])
    before = wrong.get_weights()
    with pytest.raises(ValueError, match=r"Shape mismatch for weight 'conv2d.*/kernel'.*expects shape \(3, 3, 3, 5\), "
                                         r"the file has \(3, 3, 3, 4\)"):
        wrong.load_weights(os.path.join(FIXTURES, "conv_model.weights.h5"))
    for a, b in zip(wrong.get_weights(), before):
        numpy.testing.assert_array_equal(a, b)


def test_skip_mismatch_loads_what_fits_and_warns_about_the_rest():
    wrong = mk.Sequential([mk.Input((8, 8, 3)), layers.Conv2D(4, 3, padding="same", activation="relu"),
                           layers.Flatten(), layers.Dense(7)])
    with pytest.warns(UserWarning, match="Skipping loading weights for 'dense.*expects shape \\(256, 7\\)"):
        wrong.load_weights(os.path.join(FIXTURES, "conv_model.weights.h5"), skip_mismatch=True)
    reference = mk.models.load_model(os.path.join(FIXTURES, "conv_model.keras"))
    numpy.testing.assert_array_equal(wrong.layers[0].get_weights()[0], reference.get_layer("conv").get_weights()[0])
