"""keras.layers in Keras's family folders, loaded lazily (layers/__init__.py).

Every public name of a family module is listed in ``_EXPORTS`` with its
module, ``import minikeras.layers`` loads the layer engine only, a name loads
its module on first use, and a config naming a layer that nothing imported
yet still finds it (``base.get_layer_class``).
"""
import importlib
import json
import os
import pathlib
import subprocess
import sys

import pytest

import minikeras
from minikeras import layers

LAYERS = pathlib.Path(layers.__file__).parent
FAMILIES = ("core", "activations", "convolutional", "pooling", "normalization", "rnn", "attention", "merging",
            "reshaping", "regularization", "preprocessing")
ROOT = pathlib.Path(minikeras.__file__).resolve().parent.parent
# Names the family modules export to each other, not keras.layers names: the layers' helpers (attention
# inputs, quantized and LoRA mixins, the categorical encoding) and FeatureSpace, which is keras.utils'.
NOT_KERAS_LAYERS_NAMES = {"check_dropout", "resolve_inputs", "check_input_ranks", "check_feature_sizes",
                          "QuantizationLayout", "quantization_layout", "LoraMixin", "DenseQuantization",
                          "MergedQuantizedKernel", "with_merged_lora_kernel", "EinsumDenseQuantization",
                          "EmbeddingQuantization", "encode_categorical", "FeatureSpace", "Cross", "Feature",
                          "cardinality", "serialize_spec"}


def _family_modules():
    for family in FAMILIES:
        for path in sorted((LAYERS / family).rglob("*.py")):
            if path.name != "__init__.py":
                yield ".".join(path.relative_to(LAYERS).with_suffix("").parts)


def test_every_family_is_a_folder_and_nothing_else_is():
    folders = {path.name for path in LAYERS.iterdir() if path.is_dir() and path.name != "__pycache__"}
    assert folders == set(FAMILIES)


@pytest.mark.parametrize("module", list(_family_modules()))
def test_every_public_name_of_a_family_module_is_listed_with_its_module(module):
    loaded = importlib.import_module(f"minikeras.layers.{module}")
    for name in set(getattr(loaded, "__all__", ())) - NOT_KERAS_LAYERS_NAMES:
        assert layers._MODULE_OF.get(name) == module, f"{name} (layers/{module}.py) is not in layers._EXPORTS"
        assert getattr(layers, name) is getattr(loaded, name)


def test_every_listed_name_resolves_and_dir_lists_it():
    assert set(layers._MODULE_OF) <= set(dir(layers))
    for name, module in layers._MODULE_OF.items():
        assert getattr(importlib.import_module(f"minikeras.layers.{module}"), name) is getattr(layers, name)
    with pytest.raises(AttributeError, match="no attribute 'NoSuchLayer'"):
        layers.NoSuchLayer  # noqa: B018


_FRESH = """
import json, sys
import minikeras.layers
def family_modules():
    return sorted(m for m in sys.modules if m.startswith("minikeras.layers.") and m.split(".")[2] in FAMILIES)
out = {"after_import": family_modules()}
from minikeras.layers import Dense
out["after_dense"] = family_modules()
from minikeras.layers.base import get_layer_class
out["gru"] = get_layer_class("GRU").__module__
out["alias"] = get_layer_class("GlobalMaxPool3D").__name__
out["symbolic"] = get_layer_class("SymbolicOperation").__name__
out["loaded"] = type(minikeras.layers.deserialize({"class_name": "Cropping3D", "config": {"cropping": 1}})).__name__
print(json.dumps(out))
"""


def test_a_fresh_import_loads_the_engine_only_and_configs_still_find_every_layer():
    script = f"FAMILIES = {FAMILIES!r}\n" + _FRESH
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, cwd=str(ROOT),
                            timeout=120)
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout.strip().splitlines()[-1])
    assert out["after_import"] == []
    assert "minikeras.layers.core.dense" in out["after_dense"]
    assert not any(".rnn." in name or ".preprocessing." in name for name in out["after_dense"])
    assert out["gru"] == "minikeras.layers.rnn.gru"
    assert out["alias"] == "GlobalMaxPooling3D"
    assert out["symbolic"] == "SymbolicOperation"
    assert out["loaded"] == "Cropping3D"


# One layer of every family for each way a config names a class: base.get_layer_class, layers.deserialize,
# models.model_from_json; each in a fresh interpreter, before anything imported the layer's module.
_NAMED = ("_Conv", "Embedding", "ELU", "Conv2DTranspose", "GlobalAvgPool2D", "GroupNormalization", "TimeDistributed",
          "Attention", "Concatenate", "Cropping2D", "GaussianNoise", "RandomFlip")


def _deserialized_layers():
    return [layers.Identity(), layers.LeakyReLU(0.2), layers.DepthwiseConv2D(3), layers.AveragePooling3D(2),
            layers.UnitNormalization(), layers.LSTM(3), layers.AdditiveAttention(), layers.Multiply(),
            layers.ZeroPadding1D(2), layers.GaussianDropout(0.25), layers.Hashing(7)]


def _model_of_every_family():
    inputs = layers.Input(shape=(6, 4))
    x = layers.Rescaling(0.5)(inputs)
    x = layers.Conv1D(4, 3, padding="same")(x)
    x = layers.ReLU()(x)
    x = layers.LayerNormalization()(x)
    x = layers.GRU(4, return_sequences=True)(x)
    x = layers.MultiHeadAttention(num_heads=1, key_dim=2)(x, x)
    x = layers.Add()([x, inputs])
    x = layers.Dropout(0.1)(x)
    x = layers.MaxPooling1D(2)(x)
    x = layers.Flatten()(x)
    return minikeras.models.Model(inputs, layers.EinsumDense("ab,bc->ac", output_shape=3)(x))


_FRESH_CONFIGS = """
import json, sys
import minikeras.layers
from minikeras import layers
from minikeras._support.object_registration import register_keras_serializable
from minikeras.layers import base

def loaded(name):
    return f"minikeras.layers.{layers._MODULE_OF.get(name) or layers._CONFIG_ONLY[name]}" in sys.modules

out = {"plain_dict": type(base._LAYER_CLASSES) is dict}
# Precedence, before the library's Permute is loaded: custom_objects, then registered classes, then the library.
@register_keras_serializable("Test", name="Permute")
class MyPermute(base.Layer):
    pass
class OtherPermute(base.Layer):
    pass
out["registered"] = base.get_layer_class("Permute").__name__
out["custom"] = base.get_layer_class("Permute", custom_objects={"Permute": OtherPermute}).__name__
out["custom_dense"] = base.get_layer_class("Dense", custom_objects={"Dense": OtherPermute}).__name__
out["permute_loaded"] = loaded("Permute")
try:
    base.get_layer_class("OtherPermute")
except ValueError as error:
    out["unregistered"] = str(error)
out["named"] = {name: [loaded(name), base.get_layer_class(name).__name__, loaded(name)] for name in NAMED}
out["deserialized"] = []
for config in CONFIGS:
    before = loaded(config["class_name"])
    out["deserialized"].append([before, layers.serialize(layers.deserialize(config))])
from minikeras import models
out["model_loaded_before"] = sorted(name for name in MODEL_CLASSES if loaded(name))
model = models.model_from_json(MODEL)
out["model"] = [[type(layer).__name__ for layer in model.layers], list(model.output_shape)]
print(json.dumps(out))
"""


def test_configs_of_every_family_load_in_a_fresh_interpreter_with_precedence_kept():
    configs = [layers.serialize(layer) for layer in _deserialized_layers()]
    model = _model_of_every_family()
    classes = sorted({type(layer).__name__ for layer in model.layers} - {"InputLayer"})
    script = (f"NAMED = {_NAMED!r}\nCONFIGS = json.loads({json.dumps(configs)!r})\nMODEL = {model.to_json()!r}\n"
              f"MODEL_CLASSES = {classes!r}\n" + _FRESH_CONFIGS)
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    result = subprocess.run([sys.executable, "-c", "import json\n" + script], capture_output=True, text=True,
                            env=env, cwd=str(ROOT), timeout=120)
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout.strip().splitlines()[-1])
    assert out["plain_dict"]  # the registry is base's own dict, not a table swapped in from outside
    assert (out["registered"], out["custom"], out["custom_dense"]) == ("MyPermute", "OtherPermute", "OtherPermute")
    assert not out["permute_loaded"]
    assert "Unknown layer class 'OtherPermute'" in out["unregistered"]
    expected = {name: [False, "GlobalAveragePooling2D" if name == "GlobalAvgPool2D" else name, True]
                for name in _NAMED}
    assert out["named"] == expected
    assert [before for before, _ in out["deserialized"]] == [False] * len(configs)
    assert [json.loads(json.dumps(config)) for config in configs] == [again for _, again in out["deserialized"]]
    assert out["model_loaded_before"] == []
    assert out["model"] == [[type(layer).__name__ for layer in model.layers], list(model.output_shape)]


USER_CLASS_NAMED_LIKE_THE_LIBRARY = r"""
import json
import minikeras as keras
from minikeras import layers
from minikeras.layers import base

model = keras.Sequential([keras.Input((4,)), layers.Dense(2), layers.Dense(1)])
spec = layers.serialize(layers.Dense(3, name="d"))
library_mha = layers.MultiHeadAttention


class Dense(layers.Layer):  # a tutorial's own Dense, defined after the library's was loaded
    pass


class MultiHeadAttention(layers.Layer):
    pass


loaded = layers.deserialize(spec)
again = keras.models.model_from_json(model.to_json())
print(json.dumps({
    "dense": base.get_layer_class("Dense").__module__,
    "loaded": type(loaded).__module__,
    "mha": base.get_layer_class("MultiHeadAttention") is library_mha,
    "model": [type(layer).__module__ for layer in again.layers],
}))
"""


def test_a_user_class_named_like_a_library_layer_does_not_hide_it():
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    result = subprocess.run([sys.executable, "-c", USER_CLASS_NAMED_LIKE_THE_LIBRARY], capture_output=True,
                            text=True, env=env, cwd=str(ROOT), timeout=120)
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout.strip().splitlines()[-1])
    assert out["dense"].startswith("minikeras.layers.core")
    assert out["loaded"].startswith("minikeras.layers.core")
    assert out["mha"] is True
    assert all(module.startswith("minikeras.layers.core") for module in out["model"])
