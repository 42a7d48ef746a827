"""A model file is data: names resolve only against minikeras and custom_objects,
Lambda layers need safe_mode=False, bytecode is never run, shapes are checked before reading."""
import io
import json
import sys
import zipfile

import h5py
import numpy
import pytest

import minikeras as mk
from minikeras import layers
from minikeras.saving import UnsafeDeserializationError, keras_zip
from minikeras.saving.keras_config import UnknownObjectError

KERAS_LAMBDA = {  # what Keras 3.15 writes for Lambda(lambda x: x * 2): marshalled bytecode
    "module": "keras.layers", "class_name": "Lambda",
    "config": {"name": "lambda", "trainable": True, "dtype": "float32",
               "function": {"class_name": "__lambda__", "config": {
                   "code": "4wEAAAAAAAAAAAAAAAIAAAADAAAA8wwAAACXAHwAZAF6BQAAUwApAk7pAgAAAKkAKQHaAXhzAQAA\n",
                   "defaults": None, "closure": None}}, "arguments": {}},
    "registered_name": None, "build_config": {"input_shape": [None, 3]}}


def small_model():
    return mk.Sequential([mk.Input((3,)), layers.Dense(2, name="dense")], name="small")


def rewrite_config(source, target, change):
    """Copy a .keras file with its config.json changed by ``change(spec)``, as
    an attacker (or Keras) writes it: without minikeras's config checksum."""
    with zipfile.ZipFile(source) as archive:
        members = {name: archive.read(name) for name in archive.namelist()}
    spec = json.loads(members["config.json"])
    change(spec)
    members["config.json"] = json.dumps(spec).encode()
    metadata = json.loads(members["metadata.json"])
    metadata.pop("minikeras_config_crc32")
    members["metadata.json"] = json.dumps(metadata).encode()
    with zipfile.ZipFile(target, "w") as archive:
        for name, data in members.items():
            archive.writestr(name, data)


def test_unknown_class_names_it_and_points_to_custom_objects(tmp_path):
    small_model().save(tmp_path / "m.keras")
    rewrite_config(tmp_path / "m.keras", tmp_path / "bad.keras",
                   lambda spec: spec["config"]["layers"][1].update(class_name="FancyDense"))
    with pytest.raises(UnknownObjectError, match="Unknown layer class 'FancyDense'.*custom_objects"):
        mk.models.load_model(tmp_path / "bad.keras")


def test_module_hint_is_never_imported(tmp_path):
    small_model().save(tmp_path / "m.keras")
    # "this": a standard-library module nothing imports (importing it prints the Zen of Python).
    assert "this" not in sys.modules

    def point_to_a_module(spec):
        spec["config"]["layers"][1].update(module="this", class_name="s", registered_name="this>s")

    rewrite_config(tmp_path / "m.keras", tmp_path / "bad.keras", point_to_a_module)
    with pytest.raises(UnknownObjectError, match="this>s"):
        mk.models.load_model(tmp_path / "bad.keras")
    assert "this" not in sys.modules


def test_keras_lambda_bytecode_is_refused_in_and_out_of_safe_mode(tmp_path):
    small_model().save(tmp_path / "m.keras")
    rewrite_config(tmp_path / "m.keras", tmp_path / "lambda.keras",
                   lambda spec: spec["config"]["layers"].insert(1, KERAS_LAMBDA))
    with pytest.raises(UnsafeDeserializationError, match="Lambda layer 'lambda'.*safe_mode is on.*safe_mode=False"):
        mk.models.load_model(tmp_path / "lambda.keras")
    with pytest.raises(ValueError, match="bytecode, which minikeras never runs"):
        mk.models.load_model(tmp_path / "lambda.keras", safe_mode=False)


def double(x):
    return x * 2


@pytest.mark.parametrize("suffix", [".keras", ".h5"])
def test_named_lambda_needs_safe_mode_off_and_the_function_in_custom_objects(tmp_path, suffix):
    model = mk.Sequential([mk.Input((3,)), layers.Lambda(double, name="twice"), layers.Dense(2)])
    path = tmp_path / f"m{suffix}"
    model.save(path)
    with pytest.raises(UnsafeDeserializationError, match="Lambda layer 'twice'.*safe_mode is on"):
        mk.models.load_model(path)
    with pytest.raises(ValueError, match="'double'.*not in custom_objects"):
        mk.models.load_model(path, safe_mode=False)  # not looked up in its module, even though it is imported
    restored = mk.models.load_model(path, safe_mode=False, custom_objects={"double": double})
    x = numpy.ones((2, 3), "float32")
    numpy.testing.assert_array_equal(restored.predict(x, verbose=0), model.predict(x, verbose=0))


def write_weights(path, arrays):
    with h5py.File(path, "w") as handle:
        group = handle.create_group("layers/dense/vars")
        group.attrs["name"] = "dense"
        for index, array in enumerate(arrays):
            group.create_dataset(str(index), data=array)


def test_dataset_shape_is_checked_before_reading(tmp_path, monkeypatch):
    model = small_model()
    write_weights(tmp_path / "w.weights.h5", [numpy.zeros((300, 2), "float32"), numpy.zeros(2, "float32")])
    reads = []
    original = h5py.Dataset.__getitem__
    monkeypatch.setattr(h5py.Dataset, "__getitem__", lambda self, key: reads.append(self.name) or original(self, key))
    with pytest.raises(ValueError, match=r"Shape mismatch for weight 'dense/kernel'.*expects shape \(3, 2\), "
                                         r"the file has \(300, 2\)"):
        model.load_weights(tmp_path / "w.weights.h5")
    assert reads == []  # nothing was read


def test_non_numeric_dataset_is_refused(tmp_path):
    model = small_model()
    with h5py.File(tmp_path / "w.weights.h5", "w") as handle:
        group = handle.create_group("layers/dense/vars")
        group.create_dataset("0", data=numpy.array([b"abc"] * 6).reshape(3, 2))
        group.create_dataset("1", data=numpy.zeros(2, "float32"))
    with pytest.raises(ValueError, match="dtype .*expected a numeric array"):
        model.load_weights(tmp_path / "w.weights.h5")


def test_weight_count_mismatch_and_skip_mismatch(tmp_path):
    model = small_model()
    write_weights(tmp_path / "w.weights.h5", [numpy.zeros((3, 2), "float32")])
    with pytest.raises(ValueError, match=r"Weight count mismatch for 'dense'.*expects 2 weight\(s\).*has 1"):
        model.load_weights(tmp_path / "w.weights.h5")
    before = model.get_weights()
    with pytest.warns(UserWarning, match="Skipping loading weights for 'dense'"):
        model.load_weights(tmp_path / "w.weights.h5", skip_mismatch=True)
    for a, b in zip(model.get_weights(), before):
        numpy.testing.assert_array_equal(a, b)


def test_oversized_config_is_refused_before_parsing(tmp_path, monkeypatch):
    small_model().save(tmp_path / "m.keras")
    monkeypatch.setattr(keras_zip, "_MAX_CONFIG_BYTES", 100)
    with pytest.raises(ValueError, match="config.json.*more than a model config can be"):
        mk.models.load_model(tmp_path / "m.keras")


def test_incomplete_keras_zip_says_what_is_missing(tmp_path):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("config.json", json.dumps({"class_name": "Sequential", "config": {"layers": []}}))
    (tmp_path / "m.keras").write_bytes(buffer.getvalue())
    with pytest.raises(ValueError, match="not a complete .keras file: it has no 'model.weights.h5'"):
        mk.models.load_model(tmp_path / "m.keras")
