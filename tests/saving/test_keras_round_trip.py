"""minikeras -> file -> minikeras in every format: weights and optimizer state bit for bit."""
import numpy
import pytest

import minikeras as mk
from tests.saving.conftest import assert_same_arrays, assert_same_optimizer_state, build_functional, build_sequential
from tests.saving.keras_twins import BUILDERS, TwoDense, as_list, model_params, one_or_many, trained
from tests.saving.test_model_round_trip import WithConfig, train


# tf.keras's .h5 holds no subclassed model (Keras refuses to write one), so two_dense is .keras only.
ROUND_TRIPS = [pytest.param(param.values[0], suffix, marks=param.marks) for param in model_params(BUILDERS)
               for suffix in (".keras", ".h5") if not (suffix == ".h5" and param.values[0] == "two_dense")]


@pytest.mark.parametrize(("name", "suffix"), ROUND_TRIPS)
def test_every_weighted_layer_round_trips_bit_for_bit(tmp_path, name, suffix):
    model, inputs, _ = trained(name, numpy.random.default_rng(0))
    model.save(tmp_path / f"m{suffix}")
    restored = mk.models.load_model(tmp_path / f"m{suffix}", custom_objects={"TwoDense": TwoDense})
    assert type(restored) is type(model)
    assert_same_arrays(restored.get_weights(), model.get_weights())
    assert_same_optimizer_state(restored, model)
    for a, b in zip(as_list(restored.predict(one_or_many(inputs), verbose=0)),
                    as_list(model.predict(one_or_many(inputs), verbose=0))):
        numpy.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("name", model_params(BUILDERS))
def test_weights_h5_round_trip_restores_weights_and_optimizer_state(tmp_path, name):
    model, inputs, targets = trained(name, numpy.random.default_rng(0))
    model.save_weights(tmp_path / "m.weights.h5")
    other, _, _ = trained(name, numpy.random.default_rng(5))  # other weights, other optimizer state
    other.load_weights(tmp_path / "m.weights.h5")
    assert_same_arrays(other.get_weights(), model.get_weights())
    assert_same_optimizer_state(other, model)
    model.train_on_batch(one_or_many(inputs), one_or_many(targets))
    other.train_on_batch(one_or_many(inputs), one_or_many(targets))
    if model.weights[0].device.kind == "gpu":
        # A GPU adds an Embedding's gradient rows with atomics, in an order
        # that changes from run to run (as PyTorch's index_add_ does): on an
        # H200, 2 of 80 embedding values differed in the last bit.
        for actual, expected in zip(other.get_weights(), model.get_weights()):
            numpy.testing.assert_allclose(actual, expected, rtol=1e-6, atol=1e-8)
    else:
        assert_same_arrays(other.get_weights(), model.get_weights())


def test_weights_h5_continued_training_is_bit_for_bit(data, tmp_path):
    x, y = data
    mk.random.seed(0)
    uninterrupted = build_sequential()
    train(uninterrupted, x, y, epochs=4)
    mk.random.seed(0)
    model = build_sequential()
    train(model, x, y, epochs=2)
    model.save_weights(tmp_path / "m.weights.h5")
    resumed = build_sequential()
    resumed.load_weights(tmp_path / "m.weights.h5")
    train(resumed, x, y, epochs=4, initial_epoch=2)
    assert_same_arrays(resumed.get_weights(), uninterrupted.get_weights())
    assert_same_optimizer_state(resumed, uninterrupted)


def test_keras_zip_round_trips_compile_arguments(functional_data, tmp_path):
    x, y = functional_data
    model = build_functional()
    train(model, x, y, epochs=1)
    model.save(tmp_path / "f.keras")
    restored = mk.models.load_model(tmp_path / "f.keras")
    assert restored.evaluate(x, y, verbose=0, return_dict=True) == model.evaluate(x, y, verbose=0, return_dict=True)
    assert type(restored._compile_args["loss"]["first"]) is mk.losses.MeanSquaredError


def test_subclassed_model_with_config_round_trips_through_keras_zip(data, tmp_path):
    x, y = data
    model = WithConfig(units=3)
    model.compile(optimizer="adam", loss="mse")
    model.fit(x, numpy.repeat(y, 3, axis=1), epochs=1, verbose=0)
    model.save(tmp_path / "m.keras")
    restored = mk.models.load_model(tmp_path / "m.keras", custom_objects={"WithConfig": WithConfig})
    assert type(restored) is WithConfig and restored.units == 3
    numpy.testing.assert_array_equal(restored.predict(x, verbose=0), model.predict(x, verbose=0))
    assert_same_optimizer_state(restored, model)


def test_save_format_overrides_the_suffix(data, tmp_path):
    model = build_sequential()
    model.save(tmp_path / "model.bin", save_format="keras")
    restored = mk.models.load_model(tmp_path / "model.bin")  # read by content, not by name
    assert_same_arrays(restored.get_weights(), model.get_weights())
    with pytest.raises(ValueError, match="save_format='tf'.*not supported"):
        model.save(tmp_path / "model", save_format="tf")


def test_load_weights_reads_a_keras_zip(data, tmp_path):
    model = build_sequential()
    model.save(tmp_path / "m.keras")
    other = build_sequential()
    other.load_weights(tmp_path / "m.keras")
    assert_same_arrays(other.get_weights(), model.get_weights())


@mk.saving.register_keras_serializable(package="my_package")
class Scaled(mk.layers.Layer):
    """A user's layer saved under a registered name."""

    def __init__(self, factor=2.0, **kwargs):
        super().__init__(**kwargs)
        self.factor = factor

    def call(self, inputs):
        return inputs * self.factor

    def get_config(self):
        return {**super().get_config(), "factor": self.factor}


def test_registered_custom_layer_is_written_under_its_registered_name(tmp_path):
    import json
    import zipfile

    model = mk.Sequential([mk.Input((3,)), Scaled(3.0, name="scaled"), mk.layers.Dense(2)])
    model.save(tmp_path / "m.keras")
    with zipfile.ZipFile(tmp_path / "m.keras") as archive:
        spec = json.loads(archive.read("config.json"))["config"]["layers"][1]
    assert spec["registered_name"] == "my_package>Scaled" and spec["class_name"] == "Scaled"
    assert spec["module"] is None  # never a module path to import
    restored = mk.models.load_model(tmp_path / "m.keras", custom_objects={"my_package>Scaled": Scaled})
    assert type(restored.layers[0]) is Scaled and restored.layers[0].factor == 3.0
    x = numpy.ones((2, 3), "float32")
    numpy.testing.assert_array_equal(restored.predict(x, verbose=0), model.predict(x, verbose=0))


def test_save_weights_refuses_a_keras_zip_name(data, tmp_path):
    model = build_sequential()
    with pytest.raises(ValueError, match="model.save\\(path\\).*'.weights.h5'"):
        model.save_weights(tmp_path / "w.keras")
    assert list(tmp_path.iterdir()) == []


def test_a_file_that_is_neither_hdf5_nor_a_zip_gets_a_clear_error(tmp_path):
    (tmp_path / "m.keras").write_text("not a model")
    with pytest.raises(ValueError, match="is not an HDF5 file nor a .keras zip"):
        mk.models.load_model(tmp_path / "m.keras")


def two_branches(swapped):
    a, b = mk.Input((4,), name="a"), mk.Input((4,), name="b")
    left, right = mk.layers.Dense(3, name="left"), mk.layers.Dense(3, name="right")
    branches = [right(b), left(a)] if swapped else [left(a), right(b)]
    return mk.Model([a, b], mk.layers.Concatenate()(branches))


def test_weights_h5_matches_layers_by_name_before_position(tmp_path):
    model = two_branches(swapped=False)
    model.save_weights(tmp_path / "w.weights.h5")
    other = two_branches(swapped=True)  # Keras's order, hence the paths, swap: layers/dense is now 'right'
    from minikeras.saving.keras_weights_h5 import walk

    assert [name for path, name, _ in walk(model) if path == "layers/dense"] == ["left"]
    assert [name for path, name, _ in walk(other) if path == "layers/dense"] == ["right"]
    other.load_weights(tmp_path / "w.weights.h5")
    for name in ("left", "right"):
        assert_same_arrays(other.get_layer(name).get_weights(), model.get_layer(name).get_weights())


def test_weights_h5_into_an_optimizer_already_built_in_another_order(functional_data, tmp_path):
    # build_functional's layer order differs from Keras's (a shared layer), so
    # training builds the optimizer on another order than the file's.
    from minikeras.saving.keras_order import keras_trainable_order

    x, y = functional_data
    model = build_functional()
    train(model, x, y, epochs=1)
    assert [id(w) for w in model.optimizer._trainable_variables] != [id(w) for w in keras_trainable_order(model)]
    model.save_weights(tmp_path / "f.weights.h5")
    other = build_functional()
    train(other, x, y, epochs=2)  # its optimizer is built, in minikeras's order
    other.load_weights(tmp_path / "f.weights.h5")
    assert_same_arrays(other.get_weights(), model.get_weights())
    assert_same_optimizer_state(other, model)
    train(model, x, y, epochs=1)
    train(other, x, y, epochs=1)
    assert_same_arrays(other.get_weights(), model.get_weights())
