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
