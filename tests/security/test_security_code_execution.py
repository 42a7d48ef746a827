"""Loading a model file never runs code the file names (issue 12, critical).

Each crafted file names a gadget; the gadget is replaced by a spy that
would create a sentinel file, so a loader that resolved the name (by module
lookup, as the old Lambda.from_config did) would create it. Every load must
be refused, and the sentinel must not exist.
"""
import builtins
import os
import posix
import subprocess

import numpy
import pytest

import minikeras as mk
from minikeras._support import object_registration, safe_mode
from minikeras.saving import FileLoadError, UnsafeDeserializationError

import craft_files


@pytest.fixture
def sentinel(tmp_path, monkeypatch):
    """A path the spied gadgets create when a loader calls them on a
    tensor (the probe batch of a model rebuild); other calls (Python's own
    uses of eval, say) reach the real function."""
    path = tmp_path / "SENTINEL"

    def spy_for(original):
        def spy(*args, **kwargs):
            if args and isinstance(args[0], (mk.Tensor, numpy.ndarray)) or original is None:
                path.write_text("payload ran")
                return 0
            return original(*args, **kwargs)

        return spy

    for module, name in [(os, "system"), (subprocess, "Popen"), (builtins, "eval"), (posix, "spawnve"),
                         (mk.metrics, "resolve")]:
        monkeypatch.setattr(module, name, spy_for(getattr(module, name, None)), raising=False)
    monkeypatch.setattr(safe_mode, "_unsafe_enabled", False)
    return path


GADGETS = [("os", "system"), ("subprocess", "Popen"), ("builtins", "eval"), ("posix", "spawnve")]


@pytest.mark.parametrize("module, function", GADGETS)
@pytest.mark.parametrize("compile_model", [True, False])
def test_lambda_gadget_is_refused_in_safe_mode(tmp_path, sentinel, module, function, compile_model):
    path = tmp_path / "crafted.h5"
    craft_files.lambda_gadget(path, module, function)
    with pytest.raises(UnsafeDeserializationError, match=f"Lambda layer 'scale'.*{function}.*safe_mode=False"):
        mk.models.load_model(path, compile=compile_model)
    assert not sentinel.exists()


@pytest.mark.parametrize("module, function", GADGETS)
def test_lambda_gadget_is_not_resolved_even_unsafe(tmp_path, sentinel, module, function):
    # Opting out of safe mode never turns a name into a module attribute.
    path = tmp_path / "crafted.h5"
    craft_files.lambda_gadget(path, module, function)
    with pytest.raises(ValueError, match=f"'{function}'.*not in custom_objects"):
        mk.models.load_model(path, safe_mode=False)
    assert not sentinel.exists()


@pytest.mark.parametrize("class_name, module", [("Popen", "subprocess"), ("subprocess.Popen", None),
                                                ("posix.system", None)])
def test_class_path_into_another_module_is_refused(tmp_path, sentinel, class_name, module):
    path = tmp_path / "crafted.h5"
    craft_files.layer_class_gadget(path, class_name, module=module)
    with pytest.raises(ValueError, match=f"Unknown layer class '{class_name}'"):
        mk.models.load_model(path, safe_mode=False)
    assert not sentinel.exists()


def test_layer_subclass_outside_the_library_needs_custom_objects(tmp_path, sentinel):
    # Payload is imported (so registered as a Layer subclass) and its
    # constructor writes the sentinel: the name alone must not reach it.
    path = tmp_path / "crafted.h5"
    craft_files.layer_class_gadget(path, "Payload", {"path": str(sentinel)})
    with pytest.raises(ValueError, match="Unknown layer class 'Payload'.*custom_objects"):
        mk.models.load_model(path)
    assert not sentinel.exists()


@pytest.mark.parametrize("loss", [{"__function__": "resolve"}, {"__function__": "system"},
                                  {"__function__": "get"}, {"__class__": "Popen"}])
def test_loss_naming_a_non_loss_callable_is_refused(tmp_path, sentinel, loss):
    path = tmp_path / "crafted.h5"
    craft_files.loss_gadget(path, loss)
    with pytest.raises(ValueError, match="Unknown|not a"):
        mk.models.load_model(path)
    assert not sentinel.exists()
    # compile=False never reads the training config.
    assert mk.models.load_model(path, compile=False).optimizer is None


def test_unknown_loss_string_and_optimizer_class_are_refused(tmp_path, sentinel):
    path = tmp_path / "loss.h5"
    craft_files.loss_gadget(path, "eval")
    with pytest.raises(ValueError, match="Unknown loss 'eval'"):
        mk.models.load_model(path)
    path = tmp_path / "optimizer.h5"
    craft_files.optimizer_gadget(path, "Popen")
    with pytest.raises(ValueError, match="Unknown optimizer 'Popen'"):
        mk.models.load_model(path)
    assert not sentinel.exists()


# ------------------------------------------------------------- opting in
def test_safe_mode_false_loads_a_legitimate_lambda_from_custom_objects(tmp_path, sentinel):
    path = tmp_path / "model.h5"
    model = craft_files.save_lambda_model(path)
    x = numpy.random.default_rng(0).standard_normal((5, 4)).astype("float32")
    with pytest.raises(UnsafeDeserializationError, match="enable_unsafe_deserialization"):
        mk.models.load_model(path, custom_objects={"scale_by_two": craft_files.scale_by_two})
    restored = mk.models.load_model(path, safe_mode=False, custom_objects={"scale_by_two": craft_files.scale_by_two})
    numpy.testing.assert_array_equal(restored.predict(x, verbose=0), model.predict(x, verbose=0))
    assert not sentinel.exists()


def test_the_global_switch_allows_a_registered_lambda_function(tmp_path, sentinel, monkeypatch):
    monkeypatch.setattr(object_registration, "_REGISTERED", {})
    path = tmp_path / "model.h5"
    model = craft_files.save_lambda_model(path)
    with pytest.raises(UnsafeDeserializationError):
        mk.models.load_model(path)
    mk.saving.register_keras_serializable(package="Tests")(craft_files.scale_by_two)
    mk.config.enable_unsafe_deserialization()
    assert not safe_mode.in_safe_mode()
    restored = mk.models.load_model(path)
    x = numpy.ones((2, 4), "float32")
    numpy.testing.assert_array_equal(restored.predict(x, verbose=0), model.predict(x, verbose=0))


def test_safe_mode_scope_is_restored_after_a_failed_load(tmp_path, sentinel):
    path = tmp_path / "crafted.h5"
    craft_files.lambda_gadget(path, "os", "system")
    with pytest.raises(ValueError):
        mk.models.load_model(path, safe_mode=False)
    assert safe_mode.in_safe_mode()


def test_every_crafted_file_of_the_script_is_refused(tmp_path, sentinel):
    files = craft_files.all_crafted(str(tmp_path))
    for name, path in files.items():
        with pytest.raises((ValueError, FileLoadError)):
            mk.models.load_model(path)
    assert not sentinel.exists() and not (tmp_path / "SENTINEL").exists()


def test_a_lambda_nested_in_a_wrapper_of_a_sequential_model_is_refused(tmp_path, sentinel):
    path = tmp_path / "nested.h5"
    model = mk.Sequential([mk.layers.TimeDistributed(mk.layers.Lambda(craft_files.scale_by_two, name="inner"),
                                                     input_shape=(3, 4), name="wrapper")])
    model.save(path)

    def edit(config):
        inner = config["config"]["layers"][-1]["config"]["layer"]["config"]
        inner.update(function="system", module="os")
        return config

    craft_files.rewrite_attribute(path, "model_config", edit)
    with pytest.raises(UnsafeDeserializationError, match="Lambda layer 'inner'"):
        mk.models.load_model(path)
    with pytest.raises(ValueError, match="'system'.*not in custom_objects"):
        mk.models.load_model(path, safe_mode=False)
    assert not sentinel.exists()
