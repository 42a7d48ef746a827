"""Keras's config schema for every layer class minikeras has: Keras's own serialized
configs (fixtures/keras/layer_configs.json, from make_keras_fixtures.py) build the
same layer in minikeras, and minikeras writes them back in Keras's schema."""
import json
import os

import pytest

import minikeras.layers

from minikeras.layers.base import get_layer_class, layer_from_config
from minikeras.saving import keras_config, keras_config_writer

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "keras")
with open(os.path.join(FIXTURES, "layer_configs.json")) as handle:
    KERAS_SPECS = json.load(handle)


def without_schema(value):
    """A Keras config with nested objects reduced to class_name/config (what both sides must agree on)."""
    if isinstance(value, dict):
        if "class_name" in value and "config" in value:
            if value["class_name"] == "DTypePolicy":
                return value["config"]["name"]
            return {"class_name": value["class_name"], "config": without_schema(value["config"])}
        return {key: without_schema(item) for key, item in value.items()
                if key not in ("module", "registered_name", "shared_object_id", "build_config")}
    if isinstance(value, (list, tuple)):
        return [without_schema(item) for item in value]
    return value


def test_the_fixture_covers_every_public_layer_class():
    import minikeras.layers as layers

    public = {name for name in layers.__dict__ if isinstance(getattr(layers, name), type)
              and issubclass(getattr(layers, name), layers.Layer)}
    aliases = {name for name in public if getattr(layers, name).__name__ != name}
    missing = public - aliases - set(KERAS_SPECS) - {"Layer", "InputLayer", "Lambda"}
    assert not missing, f"add these to LAYER_CASES in make_keras_fixtures.py: {sorted(missing)}"


@pytest.mark.parametrize("class_name", [pytest.param(name, marks=pytest.mark.skipif(
    not hasattr(minikeras.layers, name), reason=f"minikeras has no {name} (layers of the keras-layers branch)"))
    for name in sorted(KERAS_SPECS)])
def test_keras_config_builds_the_layer_and_comes_back_in_keras_schema(class_name):
    spec = KERAS_SPECS[class_name]
    converted = keras_config.to_minikeras(spec)
    layer = layer_from_config(get_layer_class(converted["class_name"]), converted["config"])
    assert type(layer).__name__ == class_name
    written = keras_config_writer.to_keras(layer)
    assert written["module"] == "keras.layers" and written["class_name"] == class_name
    assert written["registered_name"] is None
    theirs, ours = without_schema(spec["config"]), without_schema(written["config"])
    # Every argument Keras wrote comes back with Keras's value, except the
    # Keras-only ones minikeras drops because they change nothing.
    for key, value in theirs.items():
        if key not in ours and (key in keras_config.KERAS_ONLY_ARGUMENTS or value is None):
            continue  # dropped because it changes nothing, or left at its default (None)
        assert key in ours, (class_name, key)
        if key in ("layer", "backward_layer"):
            assert ours[key]["class_name"] == value["class_name"]
            continue
        if key == "name":
            continue
        assert _same(ours[key], value), (class_name, key, ours[key], value)


def _same(a, b):
    if isinstance(a, float) or isinstance(b, float):
        return a == pytest.approx(b)
    if isinstance(a, dict) and isinstance(b, dict):
        return all(_same(a.get(k), b.get(k)) for k in set(a) | set(b) if not (k in ("input_axes", "output_axes")
                                                                            and b.get(k) is None))
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return a == b
