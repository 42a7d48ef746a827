"""Whole models in HDF5: tf.keras 2's layout (which Keras 3 still writes for ``.h5``),
and minikeras's own older files.

A model file holds the root attribute ``model_config`` (JSON
``{"class_name", "config"}``), the group ``model_weights`` (one sub-group per
layer, see hdf5_format.py), and when compiled the attribute
``training_config`` (compile arguments and ``optimizer_config``) and the
group ``optimizer_weights`` (``<optimizer>/iteration``,
``<optimizer>/learning_rate``, then the slots).

minikeras writes Keras's schema (so Keras 3 and tf.keras read the file)
plus a ``minikeras_version`` attribute and, with the optimizer state, the
random generators' state (``minikeras_random_state``, random_state.py). Files written by minikeras before
this layout (``minikeras_version`` without ``keras_version``) keep their own
training-config encoding and are read as before.

minikeras's files also carry a CRC-32 beside every weight dataset and one
over the JSON configs (``minikeras_config_crc32``), checked on load; Keras's
files have none and load without. Loading follows _safety.py (and _support/): sizes are
checked before anything is read, the rebuild runs in safe mode and within
the budget the file's weights justify.
"""
import json
import warnings

import h5py
import numpy

from minikeras._support import load_budget
from minikeras._support.load_budget import DEFAULT_MAX_BYTES, FileLoadError
from minikeras._support.safe_mode import safe_mode_scope
from minikeras.saving import _checksum, _safety, hdf5_format, keras_compile, keras_config, keras_config_writer
from minikeras.saving.atomic import atomic_write
from minikeras.saving.versions import KERAS_VERSION, minikeras_version
from minikeras.saving.compile_config import compile_from_json
from minikeras.saving.keras_order import keras_trainable_order, state_in_order
from minikeras.saving.random_state import read_random_state, write_random_state



def _check_saveable(model):
    from minikeras.layers.base import Layer
    from minikeras.models.functional import Functional
    from minikeras.models.sequential import Sequential

    if isinstance(model, (Functional, Sequential)):
        return
    defining = next(cls for cls in type(model).__mro__ if "get_config" in vars(cls))
    if defining is Layer:
        raise NotImplementedError(
            f"Saving the whole model '{model.name}' needs its architecture, but {type(model).__name__} is a "
            "subclassed model without get_config(): its structure lives in the Python code of call(). "
            "Use model.save_weights(path) (and rebuild the model in code before load_weights), or "
            "implement get_config() (and from_config() if needed)."
        )


def model_spec_json(model):
    """``{"class_name", "config"}`` in Keras's schema, as JSON (also used by .keras)."""
    from minikeras.saving.keras_zip import _json_default

    _check_saveable(model)
    spec = keras_config_writer.to_keras(model)
    try:
        return json.dumps({"class_name": spec["class_name"], "config": spec["config"],
                           "registered_name": spec.get("registered_name")}, default=_json_default)
    except TypeError as error:
        raise TypeError(f"Cannot save model '{model.name}': its config is not JSON-serializable ({error}).") from None


# Keras 3's legacy loader cannot read the short loss names it accepts in
# compile() ("mse" fails with "Could not deserialize 'keras.metrics.mse'",
# Keras 3.15.1), so .h5 files get the full function names. Metric names are
# kept: they name the logged values ("mae"), and Keras reads them.
_FULL_NAMES = {"mse": "mean_squared_error", "mae": "mean_absolute_error", "mape": "mean_absolute_percentage_error",
               "msle": "mean_squared_logarithmic_error", "MSE": "mean_squared_error", "MAE": "mean_absolute_error",
               "MAPE": "mean_absolute_percentage_error", "MSLE": "mean_squared_logarithmic_error"}


def _full_names(value):
    if isinstance(value, str):
        return _FULL_NAMES.get(value, value)
    if isinstance(value, list):
        return [_full_names(item) for item in value]
    if isinstance(value, dict) and "class_name" not in value:
        return {key: _full_names(item) for key, item in value.items()}
    return value


def _training_config_json(model):
    config = keras_compile.compile_config(model)
    config["loss"] = _full_names(config["loss"])
    config["optimizer_config"] = {"class_name": config["optimizer"]["class_name"],
                                  "config": config.pop("optimizer")["config"]}
    return json.dumps(config)


def save_model(model, filepath, overwrite=True, include_optimizer=True):
    """Write ``model`` in tf.keras's HDF5 layout (see the module docstring)."""
    model_config = model_spec_json(model)
    compiled = (include_optimizer and getattr(model, "optimizer", None) is not None
                and getattr(model, "compiled_loss", None) is not None)
    training_config = _training_config_json(model) if compiled else None
    with atomic_write(filepath, overwrite=overwrite) as temporary:
        with h5py.File(temporary, "w", libver=hdf5_format.LIBVER) as handle:
            handle.attrs["keras_version"] = KERAS_VERSION
            handle.attrs["minikeras_version"] = minikeras_version()
            handle.attrs["backend"] = "minikeras"
            handle.attrs["model_config"] = model_config
            hdf5_format.save_weights_to_group(handle.create_group("model_weights"), model)
            handle.attrs[_checksum.CONFIG_ATTRIBUTE] = numpy.uint32(
                _checksum.config_crc32(model_config, training_config))
            if compiled:
                handle.attrs["training_config"] = training_config
                optimizer = model.optimizer
                state = state_in_order(optimizer, keras_trainable_order(model))
                names = [f"{optimizer.name}/iteration", f"{optimizer.name}/learning_rate"]
                names += [f"{optimizer.name}/{name}" for name in optimizer.state_names()[1:]]
                arrays = [state[0], _learning_rate_array(optimizer)] + state[1:]
                hdf5_format.write_arrays(handle.create_group("optimizer_weights"), names, arrays)
                write_random_state(handle, model)  # minikeras's own attribute: Keras ignores it


def _learning_rate_array(optimizer):
    saved = getattr(optimizer, "saved_learning_rate", None)  # a wrapper's own (MultiOptimizer has no rate to read)
    return numpy.asarray(optimizer.learning_rate if saved is None else saved, dtype="float32")


def _attribute_text(value):
    """A JSON attribute as text (h5py gives str or bytes)."""
    if isinstance(value, bytes):
        return value.decode("utf8")
    if not isinstance(value, str):
        raise ValueError(f"expected a JSON string attribute, found {type(value).__name__}")
    return value


def _keras_3_slot_order(saved):
    """tf.keras 2 saved slots kind by kind (``Adam/iter:0``, every ``.../m:0``, then every
    ``.../v:0``); Keras 3 and minikeras keep them variable by variable. Reorder names
    ending in ``:0`` (tf.keras 2's variable names) by the variable they belong to."""
    if len(saved) < 2 or not all(name.endswith(":0") for name, _ in saved):
        return saved
    by_variable = {}
    for name, array in saved[1:]:
        variable = name.rsplit("/", 1)[0]
        by_variable.setdefault(variable, []).append((name, array))
    return saved[:1] + [entry for entries in by_variable.values() for entry in entries]


def load_model(handle, custom_objects=None, compile=True, safe_mode=True, source="the file",  # noqa: A002
               max_bytes=DEFAULT_MAX_BYTES):
    """Read a whole model from an open HDF5 file (tf.keras 2, Keras 3 ``.h5``, or minikeras).

    The weights' declared sizes and the config checksum are checked before
    the model is rebuilt; the rebuild runs in ``safe_mode`` and within the
    budget of the file's weights (_support/load_budget.py).
    """
    from minikeras.layers.base import layer_from_config

    if "model_config" not in handle.attrs:
        raise ValueError(
            f"No model config found in {source}: it holds weights only (written by save_weights?). "
            "Build the model in code, then call model.load_weights(path)."
        )
    if "model_weights" not in handle or not isinstance(handle["model_weights"], h5py.Group):
        raise FileLoadError(f"{source} has a model config but no 'model_weights' group.")
    weight_bytes = hdf5_format.declared_weight_bytes(handle["model_weights"], source, max_bytes)
    model_text = _attribute_text(handle.attrs["model_config"])
    training_text = _attribute_text(handle.attrs["training_config"]) if "training_config" in handle.attrs else None
    _checksum.verify_configs(handle.attrs, source, model_text, training_text)
    spec = json.loads(model_text)
    if not isinstance(spec, dict) or not isinstance(spec.get("class_name"), str):
        raise FileLoadError(f"The model config in {source} is malformed: expected {{'class_name', 'config'}}.")
    with safe_mode_scope(safe_mode), load_budget.loading_budget(weight_bytes, source, max_bytes):
        converted = keras_config.to_minikeras(spec, custom_objects, safe_mode, source)
        cls = keras_config.resolve_layer_class(spec["class_name"], spec.get("registered_name"), custom_objects,
                                               source)
        model = layer_from_config(cls, converted["config"], custom_objects)
    # Names come from the same config, so matching by name is exact and does
    # not depend on the order in which layers are listed; a subclassed
    # model's inner layers get fresh names, so it is matched by position.
    saved_names = set(hdf5_format.read_names(handle["model_weights"].attrs, "layer_names") or [])
    by_name = all(name in saved_names for name, weights in hdf5_format.weight_groups(model) if weights)
    hdf5_format.load_weights_from_group(handle["model_weights"], model, by_name=by_name, source=source,
                                        max_bytes=max_bytes, keras_order=not hdf5_format.is_minikeras_v1(handle.attrs))
    if not compile:
        return model
    if "training_config" not in handle.attrs:
        warnings.warn(f"No training configuration found in {source}, so the model was *not* compiled. "
                      "Compile it manually.", stacklevel=3)
        return model
    with safe_mode_scope(safe_mode):
        if hdf5_format.is_minikeras_v1(handle.attrs):
            compile_from_json(model, training_text, custom_objects, source)  # minikeras's first format
        else:
            keras_compile.compile_from_config(model, json.loads(training_text), custom_objects, source)
    if "optimizer_weights" in handle:
        saved = _keras_3_slot_order(_read_optimizer_state(handle["optimizer_weights"], model, source, max_bytes))
        learning_rate = None
        if len(saved) > 1 and saved[1][0].endswith("learning_rate"):
            learning_rate = float(saved[1][1])
            saved = saved[:1] + saved[2:]
        keras_compile.restore_optimizer(model, [array for _, array in saved], learning_rate, source,
                                        lambda message: warnings.warn(message, stacklevel=5),
                                        keras_order=not hdf5_format.is_minikeras_v1(handle.attrs))
    read_random_state(handle, model, source)
    return model


def _read_optimizer_state(group, model, source, max_bytes):
    """``[(name, array)]`` of the optimizer state, once their declared total is
    checked: no optimizer keeps more than a few slots per weight."""
    datasets = hdf5_format.read_datasets(group, source, max_bytes)
    declared = sum(dataset.dtype.itemsize * int(numpy.prod(dataset.shape, dtype=object)) for _, dataset in datasets)
    _safety.check_optimizer_bytes(declared, model, source, max_bytes)
    return [(name, hdf5_format.read_dataset(dataset, source)) for name, dataset in datasets]
