"""Corrupt, truncated or tampered files give the library's own error naming
the file, and a flipped weight byte is caught (issue 12, medium)."""
import json
import os
import subprocess
import sys

import h5py
import numpy
import pytest

import minikeras as mk
from minikeras.saving import FileLoadError

import corruption_trials
import craft_files


@pytest.fixture
def saved(tmp_path):
    path = tmp_path / "model.h5"
    corruption_trials.save_trained_model(path)
    return path


def _flip(path, offset, mask=0x01):
    data = bytearray(path.read_bytes())
    data[offset] ^= mask
    path.write_bytes(bytes(data))


def _dataset_offset(path, name):
    with h5py.File(path, "r") as handle:
        return handle[name].id.get_offset()


def test_a_flipped_weight_byte_is_caught_by_the_checksum(saved):
    kernel = "model_weights/hidden/hidden/kernel"
    _flip(saved, _dataset_offset(saved, kernel) + 5)
    with pytest.raises(FileLoadError, match=f"{saved.name}.*hidden/kernel.*integrity check"):
        mk.models.load_model(saved)
    with pytest.raises(FileLoadError, match="integrity check"):
        model = mk.Sequential([mk.layers.Dense(8, activation="relu", input_shape=(4,)),
                               mk.layers.BatchNormalization(), mk.layers.Dense(2)])
        model.load_weights(saved)


def test_a_flipped_optimizer_state_byte_is_caught(saved):
    with h5py.File(saved, "r") as handle:
        names = [name.decode() for name in handle["optimizer_weights"].attrs["weight_names"]]
    _flip(saved, _dataset_offset(saved, f"optimizer_weights/{names[-1]}"))
    with pytest.raises(FileLoadError, match="integrity check"):
        mk.models.load_model(saved)


def test_an_edited_config_under_its_checksum_is_caught(saved):
    craft_files.rewrite_attribute(saved, "training_config", lambda c: {**c, "loss": "mae"}, keep_checksum=True)
    with pytest.raises(FileLoadError, match="config fails its integrity check"):
        mk.models.load_model(saved)


def test_files_without_checksums_still_load(saved):
    # Files written by Keras (or older minikeras) carry no checksum attributes.
    reference = mk.models.load_model(saved)
    with h5py.File(saved, "r+") as handle:
        del handle.attrs["minikeras_config_crc32"]
        handle.visititems(lambda name, item: item.attrs.__delitem__("minikeras_crc32")
                          if isinstance(item, h5py.Dataset) else None)
        assert not any("minikeras_crc32" in item.attrs for item in _datasets(handle))
    restored = mk.models.load_model(saved)
    for a, b in zip(reference.get_weights(), restored.get_weights()):
        numpy.testing.assert_array_equal(a, b)


def _datasets(handle):
    found = []
    handle.visititems(lambda name, item: found.append(item) if isinstance(item, h5py.Dataset) else None)
    return found


@pytest.mark.parametrize("damage", ["not json", "[1, 2", json.dumps([[[[[]]]]] * 3),
                                    json.dumps({"class_name": "Sequential"}), "[" * 100000 + "]" * 100000])
def test_malformed_model_config_gives_the_library_error(saved, damage):
    with h5py.File(saved, "r+") as handle:
        handle.attrs["model_config"] = damage
        del handle.attrs["minikeras_config_crc32"]
    with pytest.raises(ValueError, match=saved.name) as raised:
        mk.models.load_model(saved)
    assert isinstance(raised.value, FileLoadError) or type(raised.value) is ValueError


def test_missing_group_and_dataset_give_the_library_error(saved):
    with h5py.File(saved, "r+") as handle:
        del handle["model_weights/hidden/hidden/bias"]
    with pytest.raises(FileLoadError, match="hidden/bias.*missing"):
        mk.models.load_model(saved)
    with h5py.File(saved, "r+") as handle:
        del handle["model_weights"]
    with pytest.raises(FileLoadError, match="no 'model_weights' group"):
        mk.models.load_model(saved)


def test_string_weight_dataset_is_refused(saved):
    with h5py.File(saved, "r+") as handle:
        del handle["model_weights/hidden/hidden/bias"]
        handle["model_weights/hidden"].create_dataset("hidden/bias", data=numpy.array([b"x"] * 8))
    with pytest.raises(FileLoadError, match="dtype .*expected a numeric array"):
        mk.models.load_model(saved)


@pytest.mark.parametrize("suffix", [".h5", ".keras"])
def test_every_truncation_and_sampled_flip_is_caught_or_harmless(suffix):
    # In a subprocess: HDF5 runs C code on the damaged bytes.
    script = os.path.join(os.path.dirname(__file__), "corruption_trials.py")
    result = subprocess.run([sys.executable, script, "--truncations", "20", "--flips", "60", "--seed", "3",
                             "--suffix", suffix], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]
    report = json.loads(result.stdout)
    assert report["bad"] == []
    assert report["truncations"] == {"library_error": 20}
    assert set(report["flips"]) <= {"library_error", "silent_same"} and report["flips"]["library_error"] > 0
