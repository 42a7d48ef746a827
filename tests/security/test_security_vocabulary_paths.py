"""A config is data on every path that deserializes it (issue 36, item 3): a
lookup whose config names a vocabulary *file* is refused in safe mode by
``model_from_json``, ``deserialize_keras_object``, ``layers.deserialize``,
``from_config`` (a layer's or a model's) and ``load_model``, as Keras
refuses it under its SafeModeScope; the file is never opened. Code that
constructs the layer itself, or a caller who turns safe mode off, still
reads the file."""
import builtins
import json

import pytest

import minikeras as mk
from minikeras import layers, models, saving
from minikeras._support import safe_mode
from minikeras.saving import UnsafeDeserializationError


@pytest.fixture
def secret(tmp_path, monkeypatch):
    """A vocabulary file outside any model, and the list of paths opened while a test runs."""
    path = tmp_path / "secret.txt"
    path.write_text("hunter2\nswordfish\n")
    opened, original = [], builtins.open

    def spying_open(file, *args, **kwargs):
        opened.append(str(file))
        return original(file, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", spying_open)
    return str(path), opened


def _lookup_spec(path, class_name="StringLookup"):
    return {"module": "keras.layers", "class_name": class_name, "config": {"name": "words", "vocabulary": path},
            "registered_name": None}


def _model_json(path, class_name="StringLookup"):
    inputs = layers.Input(shape=(1,), dtype="string")
    lookup = getattr(layers, class_name)(vocabulary=["a"], name="words")
    spec = json.loads(mk.Model(inputs, lookup(inputs)).to_json())
    for layer in spec["config"]["layers"]:
        if layer["class_name"] == class_name:
            layer["config"]["vocabulary"] = path
    return json.dumps(spec)


ENTRY_POINTS = {
    "deserialize_keras_object": lambda path: saving.deserialize_keras_object(_lookup_spec(path), safe_mode=True),
    "deserialize_keras_object default": lambda path: saving.deserialize_keras_object(_lookup_spec(path)),
    "layers.deserialize": lambda path: layers.deserialize(_lookup_spec(path)),
    "StringLookup.from_config": lambda path: layers.StringLookup.from_config({"vocabulary": path}),
    "IntegerLookup.from_config": lambda path: layers.IntegerLookup.from_config({"vocabulary": path}),
    "TextVectorization.from_config": lambda path: layers.TextVectorization.from_config({"vocabulary": path}),
    "model_from_json": lambda path: models.model_from_json(_model_json(path)),
    "model_from_json TextVectorization": lambda path: models.model_from_json(_model_json(path, "TextVectorization")),
    "Model.from_config": lambda path: mk.Model.from_config(_functional_config(path)),
    "Sequential.from_config": lambda path: models.Sequential.from_config(_sequential_config(path)),
}


def _functional_config(path):
    inputs = layers.Input(shape=(1,), dtype="string")
    config = mk.Model(inputs, layers.StringLookup(vocabulary=["a"], name="words")(inputs)).get_config()
    for layer in config["layers"]:
        if layer["class_name"] == "StringLookup":
            layer["config"]["vocabulary"] = path
    return config


def _sequential_config(path):
    model = models.Sequential([layers.Input(shape=(1,), dtype="string"), layers.StringLookup(vocabulary=["a"])])
    config = model.get_config()
    for layer in config["layers"]:
        if layer["class_name"] == "StringLookup":
            layer["config"]["vocabulary"] = path
    return config


@pytest.mark.parametrize("entry", sorted(ENTRY_POINTS))
def test_safe_mode_refuses_a_vocabulary_file_named_by_a_config(secret, entry):
    path, opened = secret
    with pytest.raises(UnsafeDeserializationError, match=r"vocabulary file '.*secret.txt'.*safe mode"):
        ENTRY_POINTS[entry](path)
    assert path not in opened


def test_the_refusal_is_keras_s_value_error():
    assert issubclass(UnsafeDeserializationError, ValueError)


def test_code_that_builds_the_layer_itself_reads_the_file(secret):
    path, opened = secret
    assert layers.StringLookup(vocabulary=path).get_vocabulary() == ["[UNK]", "hunter2", "swordfish"]
    lookup = layers.StringLookup()
    lookup.set_vocabulary(path)
    assert lookup.get_vocabulary(include_special_tokens=False) == ["hunter2", "swordfish"] and path in opened


def test_a_caller_who_trusts_the_config_turns_safe_mode_off(secret, monkeypatch):
    path, _ = secret
    lookup = saving.deserialize_keras_object(_lookup_spec(path), safe_mode=False)
    assert lookup.get_vocabulary() == ["[UNK]", "hunter2", "swordfish"]
    monkeypatch.setattr(safe_mode, "_unsafe_enabled", False)
    mk.config.enable_unsafe_deserialization()
    assert models.model_from_json(_model_json(path)).get_layer("words").vocabulary_size() == 3
    assert layers.StringLookup.from_config({"vocabulary": path}).vocabulary_size() == 3


def test_an_enclosing_safe_mode_wins_as_in_keras(secret):
    # A custom layer's from_config asking for safe_mode=False inside a safe load does not lift it.
    path, opened = secret
    with safe_mode.deserialization_scope(True):
        with pytest.raises(UnsafeDeserializationError):
            saving.deserialize_keras_object(_lookup_spec(path), safe_mode=False)
    assert path not in opened
    assert not safe_mode.refuses_outside_files()  # outside any deserialization, user code may name a file
