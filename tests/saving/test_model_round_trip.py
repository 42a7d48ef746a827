"""model.save -> load_model: architecture, weights, compile arguments, optimizer state."""
import json

import h5py
import numpy
import pytest

import minikeras as mk
from minikeras import layers
from tests.saving.conftest import assert_same_arrays, assert_same_optimizer_state, build_functional, build_sequential


def train(model, x, y, epochs, initial_epoch=0, shuffle=False):
    model.fit(x, y, batch_size=16, epochs=epochs, initial_epoch=initial_epoch, shuffle=shuffle, verbose=0)


def test_sequential_round_trip(data, tmp_path):
    x, y = data
    model = build_sequential()
    train(model, x, y, epochs=2)
    model.optimizer.learning_rate = 0.0123  # a changed learning rate is part of the optimizer config
    path = tmp_path / "model.h5"
    model.save(path)
    restored = mk.models.load_model(path)
    assert type(restored) is mk.Sequential
    assert [layer.name for layer in restored.layers] == ["hidden", "norm", "head"]
    assert restored.get_config() == model.get_config()
    assert_same_arrays(restored.get_weights(), model.get_weights())
    numpy.testing.assert_array_equal(restored.predict(x, verbose=0), model.predict(x, verbose=0))
    # Compiled like the original, with the optimizer state restored exactly.
    assert type(restored.optimizer) is mk.optimizers.Adam
    assert restored.optimizer.learning_rate == 0.0123
    assert restored.optimizer.iterations == model.optimizer.iterations == 6
    assert restored.optimizer.state_names() == model.optimizer.state_names()
    assert_same_optimizer_state(restored, model)
    assert restored.evaluate(x, y, verbose=0) == model.evaluate(x, y, verbose=0)


def test_functional_round_trip_with_shared_layer(functional_data, tmp_path):
    x, y = functional_data
    model = build_functional()
    train(model, x, y, epochs=2)
    path = tmp_path / "functional.h5"
    model.save(path)
    restored = mk.models.load_model(path)
    assert [layer.name for layer in restored.layers] == [layer.name for layer in model.layers]
    assert len(restored.get_layer("shared")._inbound_nodes) == 2  # still shared by both branches
    assert_same_arrays(restored.get_weights(), model.get_weights())
    for a, b in zip(restored.predict(x, verbose=0), model.predict(x, verbose=0)):
        numpy.testing.assert_array_equal(a, b)
    assert_same_optimizer_state(restored, model)
    assert restored.evaluate(x, y, verbose=0, return_dict=True) == model.evaluate(x, y, verbose=0, return_dict=True)


def test_file_layout_follows_keras_h5(data, tmp_path):
    model = build_sequential()
    train(model, *data, epochs=1)
    path = tmp_path / "model.h5"
    model.save(path)
    with h5py.File(path, "r") as handle:
        config = json.loads(handle.attrs["model_config"])
        assert config["class_name"] == "Sequential"
        # Keras's schema: the Sequential's input is an InputLayer, dtypes are policies.
        assert config["config"]["layers"][0]["class_name"] == "InputLayer"
        assert config["config"]["layers"][0]["config"]["batch_shape"] == [None, 4]
        assert config["config"]["layers"][1]["config"]["units"] == 8
        assert config["config"]["layers"][1]["config"]["dtype"]["class_name"] == "DTypePolicy"
        training = json.loads(handle.attrs["training_config"])
        # Full names: Keras 3's .h5 loader fails on "mse" (see legacy_h5.py).
        assert training["loss"] == "mean_squared_error" and training["metrics"] == ["mae"]
        assert training["optimizer_config"]["class_name"] == "Adam"
        weights = handle["model_weights"]
        assert [n.decode() for n in weights.attrs["layer_names"]] == ["hidden", "norm", "head"]
        assert [n.decode() for n in weights["hidden"].attrs["weight_names"]] == ["hidden/kernel", "hidden/bias"]
        assert [n.decode() for n in weights["norm"].attrs["weight_names"]] == [
            "norm/gamma", "norm/beta", "norm/moving_mean", "norm/moving_variance"]
        numpy.testing.assert_array_equal(weights["hidden"]["hidden/kernel"][()], model.layers[0].get_weights()[0])
        names = [n.decode() for n in handle["optimizer_weights"].attrs["weight_names"]]
        # Keras's order: step count, learning rate, then the slots.
        assert names[:2] == ["adam/iteration", "adam/learning_rate"]
        assert len(names) == len(model.optimizer.get_state()) + 1
        assert int(handle["optimizer_weights"]["adam/iteration"][()]) == 3


def continue_after_reload(build, x, y, path, shuffle, reseed):
    """Weights after 2 + 2 epochs, uninterrupted vs saved and reloaded after 2."""
    mk.random.seed(0)
    uninterrupted = build()
    train(uninterrupted, x, y, epochs=2, shuffle=shuffle)
    if reseed:
        mk.random.seed(7)
    train(uninterrupted, x, y, epochs=4, initial_epoch=2, shuffle=shuffle)

    mk.random.seed(0)
    interrupted = build()
    train(interrupted, x, y, epochs=2, shuffle=shuffle)
    interrupted.save(path)
    del interrupted
    resumed = mk.models.load_model(path)
    if reseed:
        mk.random.seed(7)
    train(resumed, x, y, epochs=4, initial_epoch=2, shuffle=shuffle)
    return uninterrupted, resumed


@pytest.mark.parametrize("suffix", [".h5", ".keras"])
@pytest.mark.parametrize("shuffle", [False, True])
def test_continued_training_is_bit_for_bit_sequential(data, tmp_path, shuffle, suffix):
    x, y = data
    # With shuffle=True both runs reseed before the second fit, since the
    # shuffling generator is not part of the file.
    uninterrupted, resumed = continue_after_reload(build_sequential, x, y, tmp_path / f"m{suffix}", shuffle,
                                                   reseed=shuffle)
    assert_same_arrays(resumed.get_weights(), uninterrupted.get_weights())
    assert_same_optimizer_state(resumed, uninterrupted)


@pytest.mark.parametrize("suffix", [".h5", ".keras"])
def test_continued_training_is_bit_for_bit_functional(functional_data, tmp_path, suffix):
    x, y = functional_data
    uninterrupted, resumed = continue_after_reload(build_functional, x, y, tmp_path / f"f{suffix}", False, False)
    assert_same_arrays(resumed.get_weights(), uninterrupted.get_weights())
    assert_same_optimizer_state(resumed, uninterrupted)


def test_continued_training_needs_the_optimizer_state(data, tmp_path):
    # The check above is sensitive: a fresh Adam (no moments, step 0) diverges.
    x, y = data
    mk.random.seed(0)
    uninterrupted = build_sequential()
    train(uninterrupted, x, y, epochs=4)
    mk.random.seed(0)
    model = build_sequential()
    train(model, x, y, epochs=2)
    model.save(tmp_path / "m.h5", include_optimizer=False)
    with pytest.warns(UserWarning, match="No training configuration found"):
        resumed = mk.models.load_model(tmp_path / "m.h5")
    assert resumed.optimizer is None
    resumed.compile(optimizer=mk.optimizers.Adam(learning_rate=0.01), loss="mse", metrics=["mae"])
    train(resumed, x, y, epochs=4, initial_epoch=2)
    assert not numpy.array_equal(resumed.get_weights()[0], uninterrupted.get_weights()[0])


def test_sgd_momentum_and_schedule_round_trip(data, tmp_path):
    x, y = data
    schedule = mk.optimizers.schedules.ExponentialDecay(0.05, decay_steps=2, decay_rate=0.5)
    model = build_sequential(optimizer=mk.optimizers.SGD(learning_rate=schedule, momentum=0.9, nesterov=True))
    train(model, x, y, epochs=1)
    model.save(tmp_path / "m.h5")
    restored = mk.models.load_model(tmp_path / "m.h5")
    assert type(restored.optimizer) is mk.optimizers.SGD
    assert restored.optimizer.get_config() == model.optimizer.get_config()
    assert restored.optimizer.learning_rate == model.optimizer.learning_rate == 0.05 * 0.5 ** 1.5
    assert_same_optimizer_state(restored, model)


def test_uncompiled_and_compile_false(data, tmp_path):
    model = build_sequential(compile_model=False)
    model.save(tmp_path / "m.h5")
    with pytest.warns(UserWarning, match="was \\*not\\* compiled"):
        restored = mk.models.load_model(tmp_path / "m.h5")
    assert restored.optimizer is None
    numpy.testing.assert_array_equal(restored.predict(data[0], verbose=0), model.predict(data[0], verbose=0))
    compiled = build_sequential()
    compiled.save(tmp_path / "c.h5")
    assert mk.models.load_model(tmp_path / "c.h5", compile=False).optimizer is None


def my_loss(y_true, y_pred):
    return mk.ops.mean(mk.ops.square(y_pred - y_true), axis=-1)


def test_custom_loss_function_needs_custom_objects(data, tmp_path):
    model = build_sequential(compile_model=False)
    model.compile(optimizer="sgd", loss=my_loss, metrics=[mk.metrics.RootMeanSquaredError(name="rmse")])
    model.save(tmp_path / "m.h5")
    with pytest.raises(ValueError, match="Unknown function 'my_loss'.*custom_objects=\\{'my_loss': my_loss\\}"):
        mk.models.load_model(tmp_path / "m.h5")
    restored = mk.models.load_model(tmp_path / "m.h5", custom_objects={"my_loss": my_loss})
    assert restored._compile_args["loss"] is my_loss
    (metric,) = restored._compile_args["metrics"]
    assert type(metric) is mk.metrics.RootMeanSquaredError and metric.name == "rmse"
    assert mk.models.load_model(tmp_path / "m.h5", compile=False).optimizer is None


def test_lambda_loss_cannot_be_saved_with_the_optimizer(tmp_path):
    model = build_sequential(compile_model=False)
    model.compile(optimizer="sgd", loss=lambda y_true, y_pred: my_loss(y_true, y_pred))
    with pytest.raises(TypeError, match="lambda.*include_optimizer=False"):
        model.save(tmp_path / "m.h5")
    assert not (tmp_path / "m.h5").exists()
    model.save(tmp_path / "m.h5", include_optimizer=False)
    assert (tmp_path / "m.h5").exists()


class NoConfig(mk.Model):
    def __init__(self):
        super().__init__()
        self.hidden = layers.Dense(6, activation="relu")
        self.out = layers.Dense(2)

    def call(self, inputs):
        return self.out(self.hidden(inputs))


class WithConfig(mk.Model):
    """A subclassed model that can be rebuilt from its config (it builds itself)."""

    def __init__(self, units=3, **kwargs):
        super().__init__(**kwargs)
        self.units = units
        self.dense = layers.Dense(units)
        self(numpy.zeros((1, 4), dtype="float32"))

    def call(self, inputs):
        return self.dense(inputs)

    def get_config(self):
        return {"units": self.units, "name": self.name}


def test_subclassed_model_without_config_cannot_be_saved_whole(data, tmp_path):
    model = NoConfig()
    model(data[0])
    with pytest.raises(NotImplementedError, match="subclassed model without get_config.*save_weights"):
        model.save(tmp_path / "m.h5")
    assert list(tmp_path.iterdir()) == []


def test_subclassed_model_with_config_round_trip(data, tmp_path):
    x, y = data
    model = WithConfig(units=3)
    model.compile(optimizer="adam", loss="mse")
    model.fit(x, numpy.repeat(y, 3, axis=1), epochs=1, verbose=0)
    model.save(tmp_path / "m.h5")
    restored = mk.models.load_model(tmp_path / "m.h5", custom_objects={"WithConfig": WithConfig})
    assert type(restored) is WithConfig and restored.units == 3
    numpy.testing.assert_array_equal(restored.predict(x, verbose=0), model.predict(x, verbose=0))
    assert_same_optimizer_state(restored, model)
