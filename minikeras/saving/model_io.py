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
state and the random generators (shuffling, the host stream of
augmentation and initializers, dropout and noise per device, the seeded
layers' own streams and SeedGenerators), so that training continues exactly
where it stopped, bit for bit. Not restored: metric states (reset at each
epoch anyway), ``History``, GPU generators (CuPy exposes no host-readable
state), and optimizer settings outside its config
(``exclude_from_weight_decay``).

Every write goes to a temporary file in the same folder, renamed into place
at the end (atomic.py): an interrupted save leaves the old file intact.
Files are written with HDF5's newest object formats (checksummed metadata),
a CRC-32 beside every weight dataset and one over the JSON configs
(_checksum.py).

Loading treats the file as untrusted data (_safety.py): names resolve only
against an allow-list, Lambda layers are refused unless ``safe_mode=False``,
sizes are checked before anything is read or allocated, and every failure
is the library's own error naming the file.
"""
import json
import warnings

import h5py
import numpy

from minikeras.saving import _checksum, _safety, hdf5_format
from minikeras.saving.atomic import atomic_write
from minikeras.saving.compile_config import compile_from_json, training_config_json
from minikeras.saving.random_state import read_random_state, write_random_state

_FORMAT_VERSION = "1"
# The newest HDF5 object formats carry checksums on every metadata block:
# a damaged header is then reported by HDF5 instead of being interpreted
# (a flipped byte in an old-format attribute header can crash the reader).
# Any h5py/HDF5 >= 1.10 reads them, Keras included.
_LIBVER = "latest"


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
        with h5py.File(temporary, "w", libver=_LIBVER) as handle:
            handle.attrs["minikeras_version"] = _version()
            handle.attrs["format_version"] = _FORMAT_VERSION
            handle.attrs["backend"] = "minikeras"
            handle.attrs["model_config"] = model_config
            hdf5_format.save_weights_to_group(handle.create_group("model_weights"), model)
            handle.attrs[_checksum.CONFIG_ATTRIBUTE] = numpy.uint32(
                _checksum.config_crc32(model_config, training_config if compiled else None))
            if compiled:
                handle.attrs["training_config"] = training_config
                optimizer = model.optimizer
                hdf5_format.write_arrays(handle.create_group("optimizer_weights"), optimizer.state_names(),
                                         optimizer.get_state())
                write_random_state(handle, model)


def _model_from_config(config, custom_objects, source):
    from minikeras.layers.base import get_layer_class, layer_from_config
    from minikeras.models.model import Model

    if not isinstance(config, dict) or "class_name" not in config or not isinstance(config.get("config"), dict):
        raise ValueError(f"The model config in {source} is malformed: expected {{'class_name', 'config'}}.")
    class_name = "Functional" if config["class_name"] == "Model" else config["class_name"]
    cls = get_layer_class(class_name, custom_objects)
    if not (isinstance(cls, type) and issubclass(cls, Model)):
        raise ValueError(f"The model config in {source} names {class_name!r}, which is not a Model class.")
    return layer_from_config(cls, config["config"], custom_objects)


def load_model(filepath, custom_objects=None, compile=True, safe_mode=True,  # noqa: A002  (Keras argument name)
               max_bytes=_safety.DEFAULT_MAX_BYTES):
    """Load a model saved by :func:`save_model`.

    A model file is data: class and function names in it resolve only
    against minikeras's own objects, registered ones and ``custom_objects``;
    nothing is imported or evaluated. Every weight dataset's shape, dtype
    and size is checked before any is read, and the rebuild may not
    allocate more than the file's weights justify.

    Args:
        filepath: the HDF5 file (or an open h5py File).
        custom_objects: ``{name: class or function}`` for custom layers,
            losses, metrics, optimizers used by the model.
        compile: compile the model with the saved training config and
            restore the optimizer state (when the file has them).
        safe_mode: refuse Lambda layers, whose function would run while
            the model is rebuilt (Keras 3's default). Pass False only for
            files you trust (or call
            ``minikeras.config.enable_unsafe_deserialization()``).
        max_bytes: refuse files whose weights declare more bytes than this
            (default 4 GiB); None for no limit.

    Returns:
        The model, compiled if the file holds a training config and
        ``compile`` is True.

    Raises:
        FileNotFoundError: no file at ``filepath``.
        UnsafeDeserializationError: a Lambda layer in safe mode (a ValueError).
        FileLoadError: a corrupt, truncated or tampered file, or absurd
            declared sizes (a ValueError naming the file and the problem).
        ValueError: not an HDF5 file, a file without a model config (a
            weights file), unknown names, or weights that do not fit the
            architecture.
    """
    source = hdf5_format.describe(filepath)
    with _safety.load_errors(source), hdf5_format.open_for_reading(filepath) as handle:
        if "model_config" not in handle.attrs:
            raise ValueError(
                f"No model config found in {source}: it holds weights only (written by save_weights?). "
                "Build the model in code, then call model.load_weights(path)."
            )
        if "model_weights" not in handle or not isinstance(handle["model_weights"], h5py.Group):
            raise _safety.FileLoadError(f"{source} has a model config but no 'model_weights' group.")
        weights_group = handle["model_weights"]
        weight_bytes = hdf5_format.declared_weight_bytes(weights_group, source, max_bytes)
        model_text = _text(handle.attrs["model_config"])
        training_text = _text(handle.attrs["training_config"]) if "training_config" in handle.attrs else None
        _checksum.verify_configs(handle.attrs, source, model_text, training_text)
        config = json.loads(model_text)
        with _safety.safe_mode_scope(safe_mode), _safety.loading_budget(weight_bytes, source, max_bytes):
            model = _model_from_config(config, custom_objects, source)
        hdf5_format.load_weights_from_group(weights_group, model, source=source, max_bytes=max_bytes)
        if not compile:
            return model
        if "training_config" not in handle.attrs:
            warnings.warn(f"No training configuration found in {source}, so the model was *not* compiled. "
                          "Compile it manually.", stacklevel=3)
            return model
        with _safety.safe_mode_scope(safe_mode):
            compile_from_json(model, training_text, custom_objects, source)
        if "optimizer_weights" in handle:
            state = _read_optimizer_state(handle["optimizer_weights"], model, source, max_bytes)
            _restore_optimizer_state(model, state, source)
        read_random_state(handle, model, source)
    return model


def _text(value):
    """A JSON attribute as text (h5py gives str or bytes)."""
    if isinstance(value, bytes):
        return value.decode("utf8")
    if not isinstance(value, str):
        raise ValueError(f"expected a JSON string attribute, found {type(value).__name__}")
    return value


def _read_optimizer_state(group, model, source, max_bytes):
    """The optimizer state arrays, once their declared total is checked: no
    optimizer keeps more than a few slots per weight."""
    datasets = hdf5_format.read_datasets(group, source, max_bytes)
    declared = sum(dataset.dtype.itemsize * int(numpy.prod(dataset.shape, dtype=object)) for _, dataset in datasets)
    weights = sum(int(numpy.prod(weight.shape, dtype=object)) * 8 for weight in model.weights)
    if max_bytes is not None and declared > 4 * weights + 2**20:
        raise _safety.FileLoadError(
            f"{source}: its optimizer state declares {declared} bytes for a model of {len(model.weights)} weights "
            f"({weights // 8} values): more than any optimizer keeps. Refusing to read it.")
    return [hdf5_format.read_dataset(dataset, source) for _, dataset in datasets]


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
        with h5py.File(temporary, "w", libver=_LIBVER) as handle:
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
    with _safety.load_errors(source), hdf5_format.open_for_reading(filepath) as handle:
        group = handle
        if hdf5_format.read_names(handle.attrs, "layer_names") is None and "model_weights" in handle:
            group = handle["model_weights"]  # a whole-model file
        hdf5_format.load_weights_from_group(group, model, by_name=by_name, skip_mismatch=skip_mismatch,
                                            source=source)


