"""Resume is bit-exact with Dropout, noise and shuffling (issue 12, "Resume"):
saving at epoch 2, reloading and training 2 more epochs equals 4 epochs."""
import json

import h5py
import numpy
import pytest

import minikeras as mk
from minikeras import layers
from minikeras.saving.random_state import ATTRIBUTE


def _build():
    model = mk.Sequential([
        layers.Dense(16, activation="relu", input_shape=(6,), name="hidden"),
        layers.Dropout(0.3, name="drop"),  # the device's stream
        layers.GaussianNoise(0.2, seed=3, name="noise"),  # the layer's own seeded stream
        layers.Dense(3, activation="softmax", name="head"),
    ])
    model.compile(optimizer=mk.optimizers.Adam(learning_rate=0.01), loss="sparse_categorical_crossentropy",
                  metrics=["accuracy"])
    return model


def _data():
    rng = numpy.random.default_rng(7)
    return rng.normal(size=(40, 6)).astype("float32"), rng.integers(0, 3, size=40)


def _fit(model, epochs, initial_epoch=0):
    x, y = _data()
    return model.fit(x, y, epochs=epochs, initial_epoch=initial_epoch, batch_size=8, shuffle=True, verbose=0)


def _four_epochs():
    mk.random.seed(0)
    model = _build()
    _fit(model, 4)
    return model.get_weights()


def _two_saved_then_two_more(path, include_optimizer=True):
    mk.random.seed(0)
    model = _build()
    _fit(model, 2)
    model.save(path, include_optimizer=include_optimizer)
    # A fresh process: other seeds, streams already drawn from.
    mk.random.seed(12345)
    mk.random.uniform((100,))
    _fit(_build(), 1)
    restored = mk.models.load_model(path, compile=include_optimizer)
    if not include_optimizer:
        restored.compile(optimizer=mk.optimizers.Adam(learning_rate=0.01), loss="sparse_categorical_crossentropy")
    _fit(restored, 4, initial_epoch=2)
    return restored.get_weights()


@pytest.mark.cpu_only(reason="saves and checks the cpu:0 streams: a GPU generator keeps its state on the device and is not saved")
@pytest.mark.parametrize("name", ["resume.h5", "resume.keras"])
def test_save_at_epoch_two_reload_and_two_more_equals_four_epochs_bit_for_bit(tmp_path, name):
    expected = _four_epochs()
    resumed = _two_saved_then_two_more(str(tmp_path / name))
    assert len(expected) == len(resumed)
    for want, got in zip(expected, resumed):
        numpy.testing.assert_array_equal(got, want)


def test_without_the_saved_state_resume_differs(tmp_path):
    """The test above can fail: with the generators' state missing, the
    resumed weights differ (Dropout masks and permutations change)."""
    path = str(tmp_path / "resume.h5")
    expected = _four_epochs()
    mk.random.seed(0)
    model = _build()
    _fit(model, 2)
    model.save(path)
    with h5py.File(path, "a") as handle:
        del handle.attrs[ATTRIBUTE]
    mk.random.seed(12345)
    restored = mk.models.load_model(path)
    _fit(restored, 4, initial_epoch=2)
    assert max(numpy.abs(got - want).max() for got, want in zip(restored.get_weights(), expected)) > 0


@pytest.mark.cpu_only(reason="saves and checks the cpu:0 streams: a GPU generator keeps its state on the device and is not saved")
def test_state_is_json_with_the_streams_training_used(tmp_path):
    path = str(tmp_path / "state.h5")
    mk.random.seed(0)
    model = _build()
    _fit(model, 1)
    model.save(path)
    with h5py.File(path, "r") as handle:
        state = json.loads(handle.attrs[ATTRIBUTE])
    assert state["version"] == 1 and state["shuffle"]["bit_generator"] == "PCG64"
    assert "cpu:0" in state["devices"]
    assert set(state["layers"]) == {"noise"} and "cpu:0" in state["layers"]["noise"]
    model.save(str(tmp_path / "no_optimizer.h5"), include_optimizer=False)
    with h5py.File(str(tmp_path / "no_optimizer.h5"), "r") as handle:
        assert ATTRIBUTE not in handle.attrs


def test_a_malformed_state_warns_and_loading_goes_on(tmp_path):
    path = str(tmp_path / "bad.h5")
    mk.random.seed(0)
    model = _build()
    _fit(model, 1)
    model.save(path)
    with h5py.File(path, "a") as handle:
        handle.attrs[ATTRIBUTE] = json.dumps({"version": 1, "shuffle": {"bit_generator": "PCG64", "state": "x"},
                                              "devices": {}, "layers": {}})
    with pytest.warns(UserWarning, match="random generator state .* could not be restored"):
        restored = mk.models.load_model(path)
    for got, want in zip(restored.get_weights(), model.get_weights()):
        numpy.testing.assert_array_equal(got, want)
    with h5py.File(path, "a") as handle:
        handle.attrs[ATTRIBUTE] = json.dumps({"version": 99})
    with pytest.warns(UserWarning, match="expected version 1"):
        mk.models.load_model(path)


@pytest.mark.cpu_only(reason="saves and checks the cpu:0 streams: a GPU generator keeps its state on the device and is not saved")
def test_streams_of_devices_this_machine_lacks_are_skipped(tmp_path):
    path = str(tmp_path / "other_machine.h5")
    mk.random.seed(0)
    model = _build()
    _fit(model, 1)
    model.save(path)
    with h5py.File(path, "a") as handle:
        state = json.loads(handle.attrs[ATTRIBUTE])
        state["devices"]["gpu:7"] = state["devices"]["cpu:0"]
        state["layers"]["noise"]["gpu:7"] = state["layers"]["noise"]["cpu:0"]
        handle.attrs[ATTRIBUTE] = json.dumps(state)
    restored = mk.models.load_model(path)
    assert restored.optimizer is not None


def _build_augmented():
    model = mk.Sequential([
        mk.Input((4, 4, 1)),
        layers.RandomFlip(name="flip"),  # the library's host stream
        layers.RandomFlip(seed=5, name="seeded_flip"),  # the layer's own host generator
        layers.Flatten(),
        layers.Dense(2, name="head"),
    ])
    model.compile(optimizer=mk.optimizers.SGD(learning_rate=0.05), loss="mse")
    return model


def _fit_images(model, epochs, initial_epoch=0):
    rng = numpy.random.default_rng(3)
    x, y = rng.normal(size=(24, 4, 4, 1)).astype("float32"), rng.normal(size=(24, 2)).astype("float32")
    model.fit(x, y, epochs=epochs, initial_epoch=initial_epoch, batch_size=8, verbose=0)


def test_resume_with_augmentation_is_bit_exact(tmp_path):
    path = str(tmp_path / "augmented.h5")
    mk.random.seed(0)
    reference = _build_augmented()
    _fit_images(reference, 4)
    mk.random.seed(0)
    model = _build_augmented()
    _fit_images(model, 2)
    model.save(path)
    mk.random.seed(777)
    mk.random.host_rng().random(10)
    restored = mk.models.load_model(path)
    _fit_images(restored, 4, initial_epoch=2)
    for got, want in zip(restored.get_weights(), reference.get_weights()):
        numpy.testing.assert_array_equal(got, want)
