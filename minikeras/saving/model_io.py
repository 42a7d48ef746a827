"""save_model / load_model / save_weights / load_weights in HDF5.

A model file holds, like Keras's h5 format:

- root attribute ``model_config``: JSON ``{"class_name", "config"}`` from
  ``model.get_config()``;
- group ``model_weights``: the weights, a sub-group per layer (see
  hdf5_format.py);
- root attribute ``training_config``: JSON of the compile arguments and the
  optimizer config (when compiled and ``include_optimizer``);
- group ``optimizer_weights``: the optimizer state from
  ``optimizer.get_state()`` (step count, then slots);
- root attribute ``minikeras_random_state`` (with the optimizer state):
  JSON of the random generators training draws from (random_state.py).

Restored by ``load_model``: the architecture, the weights, the compile
arguments, the optimizer config (its current learning rate included), its
state and the random generators (shuffling, dropout and noise, per device
and per seeded layer), so that training continues exactly where it stopped,
bit for bit. Not restored: metric states (reset at each epoch anyway),
``History``, the initializers' stream, GPU generators (CuPy exposes no
host-readable state), and optimizer settings outside its config
(``exclude_from_weight_decay``).

Every write goes to a temporary file in the same folder, renamed into place
at the end (atomic.py): an interrupted save leaves the old file intact.
"""
import inspect
import json
import warnings

import h5py
import numpy

from minikeras.saving import hdf5_format
from minikeras.saving.atomic import atomic_write
from minikeras.saving.compile_config import compile_from_json, training_config_json
from minikeras.saving.random_state import read_random_state, write_random_state

_FORMAT_VERSION = "1"


def _version():
    import minikeras

    return minikeras.__version__


def _check_model(model, what):
    from minikeras.models.model import Model

    if not isinstance(model, Model):
        raise TypeError(f"{what} expects a minikeras Model, received {type(model).__name__}.")


def _json_default(value):
    if isinstance(value, numpy.generic):
        return value.item()
    if isinstance(value, numpy.ndarray):
        return value.tolist()
    raise TypeError(f"{type(value).__name__} {value!r} is not JSON-serializable")


def _model_config_json(model):
    from minikeras.layers.base import Layer
    from minikeras.models.functional import Functional
    from minikeras.models.sequential import Sequential

    if not isinstance(model, (Functional, Sequential)):
        defining = next(cls for cls in type(model).__mro__ if "get_config" in vars(cls))
        if defining is Layer:
            raise NotImplementedError(
                f"Saving the whole model '{model.name}' needs its architecture, but {type(model).__name__} is a "
                "subclassed model without get_config(): its structure lives in the Python code of call(). "
                "Use model.save_weights(path) (and rebuild the model in code before load_weights), or "
                "implement get_config() (and from_config() if needed)."
            )
    try:
        return json.dumps({"class_name": type(model).__name__, "config": model.get_config()},
                          default=_json_default)
    except TypeError as error:
        raise TypeError(f"Cannot save model '{model.name}': its config is not JSON-serializable ({error}).") from None


def save_model(model, filepath, overwrite=True, include_optimizer=True):
    """Save architecture, weights and training state to an HDF5 file.

    Args:
        model: a Sequential or functional Model (or a subclassed model that
            implements ``get_config``).
        filepath: the file to write (e.g. ``"model.h5"``).
        overwrite: if False and the file exists, raise FileExistsError.
        include_optimizer: also save the compile arguments, the optimizer
            config and its state (if the model is compiled).

    Raises:
        NotImplementedError: a subclassed model without ``get_config``.
        TypeError: a config that cannot be stored as JSON.
        FileExistsError: the file exists and ``overwrite`` is False.

    Example:
        >>> model.save("model.h5")  # doctest: +SKIP
        >>> restored = minikeras.models.load_model("model.h5")  # doctest: +SKIP
    """
    _check_model(model, "save_model")
    model_config = _model_config_json(model)
    compiled = (include_optimizer and getattr(model, "optimizer", None) is not None
                and getattr(model, "compiled_loss", None) is not None)
    training_config = training_config_json(model) if compiled else None
    with atomic_write(filepath, overwrite=overwrite) as temporary:
        with h5py.File(temporary, "w") as handle:
            handle.attrs["minikeras_version"] = _version()
            handle.attrs["format_version"] = _FORMAT_VERSION
            handle.attrs["backend"] = "minikeras"
            handle.attrs["model_config"] = model_config
            hdf5_format.save_weights_to_group(handle.create_group("model_weights"), model)
            if compiled:
                handle.attrs["training_config"] = training_config
                optimizer = model.optimizer
                hdf5_format.write_arrays(handle.create_group("optimizer_weights"), optimizer.state_names(),
                                         optimizer.get_state())
                write_random_state(handle, model)


def _model_from_config(config, custom_objects, source):
    from minikeras.layers.base import get_layer_class

    if not isinstance(config, dict) or "class_name" not in config:
        raise ValueError(f"The model config in {source} is malformed: expected {{'class_name', 'config'}}.")
    class_name = "Functional" if config["class_name"] == "Model" else config["class_name"]
    cls = get_layer_class(class_name, custom_objects)
    if "custom_objects" in inspect.signature(cls.from_config).parameters:
        return cls.from_config(config["config"], custom_objects=custom_objects)
    return cls.from_config(config["config"])


def load_model(filepath, custom_objects=None, compile=True):  # noqa: A002  (Keras argument name)
    """Load a model saved by :func:`save_model`.

    Args:
        filepath: the HDF5 file (or an open h5py File).
        custom_objects: ``{name: class or function}`` for custom layers,
            losses, metrics, optimizers used by the model.
        compile: compile the model with the saved training config and
            restore the optimizer state (when the file has them).

    Returns:
        The model, compiled if the file holds a training config and
        ``compile`` is True.

    Raises:
        FileNotFoundError: no file at ``filepath``.
        ValueError: not an HDF5 file, a file without a model config (a
            weights file), or weights that do not fit the architecture.
    """
    source = hdf5_format.describe(filepath)
    with hdf5_format.open_for_reading(filepath) as handle:
        if "model_config" not in handle.attrs:
            raise ValueError(
                f"No model config found in {source}: it holds weights only (written by save_weights?). "
                "Build the model in code, then call model.load_weights(path)."
            )
        model = _model_from_config(json.loads(handle.attrs["model_config"]), custom_objects, source)
        hdf5_format.load_weights_from_group(handle["model_weights"], model, source=source)
        if not compile:
            return model
        if "training_config" not in handle.attrs:
            warnings.warn(f"No training configuration found in {source}, so the model was *not* compiled. "
                          "Compile it manually.", stacklevel=3)
            return model
        compile_from_json(model, handle.attrs["training_config"], custom_objects, source)
        if "optimizer_weights" in handle:
            state = [value for _, value in hdf5_format.read_arrays(handle["optimizer_weights"])]
            _restore_optimizer_state(model, state, source)
        read_random_state(handle, model, source)
    return model


def _restore_optimizer_state(model, state, source):
    optimizer = model.optimizer
    try:
        if len(state) > 1:
            # The training step builds the optimizer on trainable_weights, in
            # this order; build it the same way so slots line up.
            optimizer.build(model.trainable_weights)
        optimizer.set_state(state)
    except ValueError as error:
        warnings.warn(f"Error in loading the saved optimizer state from {source} ({error}). As a result, the "
                      "model is starting with a freshly initialized optimizer.", stacklevel=4)


def save_weights(model, filepath, overwrite=True):
    """Save the weights of every layer to an HDF5 file (Keras's h5 layout).

    Args:
        model: any Model, subclassed ones included (it must be built).
        filepath: the file to write.
        overwrite: if False and the file exists, raise FileExistsError.

    Raises:
        ValueError: the model has not created its weights yet.
    """
    _check_model(model, "save_weights")
    if not model.built and not model.weights:
        raise ValueError(
            f"Model '{model.name}' has not been built yet, so it has no weights to save. "
            "Call it on a batch of data (or build() it) first."
        )
    with atomic_write(filepath, overwrite=overwrite) as temporary:
        with h5py.File(temporary, "w") as handle:
            handle.attrs["minikeras_version"] = _version()
            handle.attrs["format_version"] = _FORMAT_VERSION
            hdf5_format.save_weights_to_group(handle, model)


def load_weights(model, filepath, skip_mismatch=False, by_name=False):
    """Load weights saved by :func:`save_weights` (or by :func:`save_model`).

    Args:
        model: the model to fill; it must have the same layers with weights,
            in the same order (or the same names with ``by_name``).
        filepath: the HDF5 file (or an open h5py File).
        skip_mismatch: skip (with a warning) layers whose weight count or
            shapes differ, instead of raising.
        by_name: match layers by name; layers absent from the file keep
            their weights.

    Raises:
        FileNotFoundError: no file at ``filepath``.
        ValueError: not an HDF5 file, or a layer/weight/shape mismatch (the
            message names the layer and the shapes). Nothing is changed then.
    """
    _check_model(model, "load_weights")
    source = hdf5_format.describe(filepath)
    with hdf5_format.open_for_reading(filepath) as handle:
        group = handle
        if hdf5_format.read_names(handle.attrs, "layer_names") is None and "model_weights" in handle:
            group = handle["model_weights"]  # a whole-model file
        hdf5_format.load_weights_from_group(group, model, by_name=by_name, skip_mismatch=skip_mismatch,
                                            source=source)


