"""What minikeras writes has the layout Keras 3 wrote for the same models (fixtures/keras),
checked without Keras: zip members, config schema, weight paths, shapes and dtypes."""
import json
import os
import zipfile

import h5py
import numpy
import pytest

from minikeras.saving import keras_config
from tests.saving.keras_twins import BUILDERS, missing_layers, model_params, trained

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "keras")


def h5_tree(handle):
    """``{dataset path: (shape, dtype kind)}`` of an open HDF5 file."""
    found = {}
    handle.visititems(lambda path, item: found.__setitem__(path, (item.shape, item.dtype.kind))
                      if isinstance(item, h5py.Dataset) else None)
    return found


def zip_weights_tree(path):
    with zipfile.ZipFile(path) as archive:
        with h5py.File(archive.open("model.weights.h5"), "r") as handle:
            return h5_tree(handle)


def text_list(values):
    return [value.decode() if isinstance(value, bytes) else str(value) for value in values]


def listed_shapes(group):
    """Shapes of the datasets a tf.keras group lists in ``weight_names``, in that order."""
    return [group[name].shape for name in text_list(group.attrs["weight_names"])]


def layer_specs(spec):
    """Every layer spec of a Keras config, nested models and wrapped layers included, in order."""
    found = [spec]
    config = spec.get("config") or {}
    for child in config.get("layers", []):
        found.extend(layer_specs(child))
    for key in ("layer", "backward_layer"):
        if isinstance(config.get(key), dict):
            found.extend(layer_specs(config[key]))
    return found


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    folder = tmp_path_factory.mktemp("layout")
    paths = {}
    for name in BUILDERS:
        if missing_layers(name):
            continue
        model, _, _ = trained(name, numpy.random.default_rng(0))
        paths[name] = {suffix: folder / f"{name}{suffix}" for suffix in (".keras", ".weights.h5", ".h5")}
        model.save(paths[name][".keras"])
        model.save_weights(paths[name][".weights.h5"])
        if name != "two_dense":
            model.save(paths[name][".h5"])
    return paths


@pytest.mark.parametrize("name", model_params(BUILDERS))
def test_keras_zip_has_keras_members_and_weight_tree(written, name):
    ours, theirs = written[name][".keras"], os.path.join(FIXTURES, f"{name}.keras")
    with zipfile.ZipFile(ours) as a, zipfile.ZipFile(theirs) as b:
        assert sorted(a.namelist()) == sorted(b.namelist())
    # Same datasets at the same paths (layers, cells, wrappers, nested models,
    # optimizer slots), same shapes and dtype kinds.
    assert zip_weights_tree(ours) == zip_weights_tree(theirs)


@pytest.mark.parametrize("name", model_params(BUILDERS))
def test_weights_h5_has_keras_tree(written, name):
    with h5py.File(written[name][".weights.h5"], "r") as a, \
            h5py.File(os.path.join(FIXTURES, f"{name}.weights.h5"), "r") as b:
        assert h5_tree(a) == h5_tree(b)
        assert [a[path].attrs.get("name") for path in ("vars", "layers/dense/vars") if path in a] == \
            [b[path].attrs.get("name") for path in ("vars", "layers/dense/vars") if path in b]


@pytest.mark.parametrize("name", model_params(BUILDERS))
def test_config_json_follows_keras_schema(written, name):
    with zipfile.ZipFile(written[name][".keras"]) as archive:
        ours = json.loads(archive.read("config.json"))
    with zipfile.ZipFile(os.path.join(FIXTURES, f"{name}.keras")) as archive:
        theirs = json.loads(archive.read("config.json"))
    assert set(theirs) - {"module"} <= set(ours)  # build_config, compile_config, registered_name...
    assert ours["compile_config"]["optimizer"]["class_name"] == theirs["compile_config"]["optimizer"]["class_name"]
    ours_layers, theirs_layers = layer_specs(ours), layer_specs(theirs)
    assert [s["class_name"] for s in ours_layers] == [s["class_name"] for s in theirs_layers]
    for mine, keras in zip(ours_layers, theirs_layers):
        assert mine.get("module") == keras.get("module") or keras.get("module") is None
        # Every argument Keras wrote is one minikeras wrote, or one minikeras lacks but can drop.
        missing = set(keras["config"]) - set(mine["config"])
        assert missing <= set(keras_config.KERAS_ONLY_ARGUMENTS), (keras["class_name"], missing)
        extra = set(mine["config"]) - set(keras["config"])
        assert extra <= {"activity_regularizer", "seed", "input_shape", "sparse"}, (keras["class_name"], extra)
        if "dtype" in keras["config"] and keras["class_name"] != "InputLayer":
            assert mine["config"]["dtype"]["class_name"] == "DTypePolicy"


@pytest.mark.parametrize("name", model_params([name for name in BUILDERS if name != "two_dense"]))
def test_legacy_h5_has_keras_layout(written, name):
    with h5py.File(written[name][".h5"], "r") as a, h5py.File(os.path.join(FIXTURES, f"{name}.h5"), "r") as b:
        assert {"model_config", "training_config", "keras_version", "backend"} <= set(a.attrs)
        assert text_list(a["model_weights"].attrs["layer_names"]) == text_list(b["model_weights"].attrs["layer_names"])
        for layer in text_list(b["model_weights"].attrs["layer_names"]):
            assert listed_shapes(a["model_weights"][layer]) == listed_shapes(b["model_weights"][layer])
        assert listed_shapes(a["optimizer_weights"]) == listed_shapes(b["optimizer_weights"])
        assert json.loads(a.attrs["model_config"])["class_name"] == json.loads(b.attrs["model_config"])["class_name"]
