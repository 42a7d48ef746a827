"""User functions as activations through saving (keras.io "Save, serialize,
and export models"): a function registered with register_keras_serializable
reloads by its registered name, an unregistered one through custom_objects
(or a custom_object_scope), in files minikeras writes and in files Keras 3.15
wrote (fixtures/keras/custom_activation.*, make_custom_activation_fixture.py)."""
import pathlib

import numpy
import pytest

import minikeras as mk

FIXTURES = pathlib.Path(__file__).parent / "fixtures" / "keras"


@mk.saving.register_keras_serializable(package="my_package", name="custom_fn")
def custom_fn(x):
    return x**2


def plain_fn(x):
    return x * 3.0


def _model():
    inputs = mk.Input(shape=(3,))
    x = mk.layers.Dense(4, activation=custom_fn)(inputs)
    return mk.Model(inputs, mk.layers.Dense(2, activation=plain_fn)(x))


def test_registered_function_serializes_as_keras_names_it():
    assert mk.activations.serialize(custom_fn) == "my_package>custom_fn"
    assert mk.activations.get("my_package>custom_fn") is custom_fn
    assert mk.activations.get({"module": "builtins", "class_name": "function", "config": "my_package>custom_fn",
                               "registered_name": "function"}) is custom_fn
    with pytest.raises(ValueError, match="register_keras_serializable"):
        mk.activations.get("plain_fn")
    with mk.saving.custom_object_scope({"plain_fn": plain_fn}):
        assert mk.activations.get("plain_fn") is plain_fn


@pytest.mark.parametrize("suffix", ["keras", "h5"])
def test_round_trip_with_and_without_custom_objects(tmp_path, suffix):
    model = _model()
    x = numpy.random.default_rng(0).normal(size=(5, 3)).astype("float32")
    expected = model.predict(x, verbose=0)
    path = tmp_path / f"model.{suffix}"
    model.save(path)
    for custom_objects in ({"plain_fn": plain_fn}, {"plain_fn": plain_fn, "custom_fn": custom_fn}):
        loaded = mk.models.load_model(path, custom_objects=custom_objects, compile=False)
        numpy.testing.assert_allclose(loaded.predict(x, verbose=0), expected, rtol=1e-6)
    with pytest.raises(ValueError, match="plain_fn"):
        mk.models.load_model(path, compile=False)


@pytest.mark.parametrize("suffix", ["keras", "h5"])
def test_files_keras_wrote_load(suffix):
    data = numpy.load(FIXTURES / "custom_activation.npz")
    loaded = mk.models.load_model(FIXTURES / f"custom_activation.{suffix}", custom_objects={"plain_fn": plain_fn},
                                  compile=False)
    numpy.testing.assert_allclose(loaded.predict(data["x"], verbose=0), data["y"], rtol=1e-5, atol=1e-6)
