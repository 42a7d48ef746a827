"""save_model / load_model / save_weights / load_weights: choose the format.

Formats, as in Keras 3:

- ``.keras``: Keras 3's zip (keras_zip.py), the default Keras writes;
- ``.h5`` / ``.hdf5`` (or ``save_format="h5"``): tf.keras's HDF5 layout
  (legacy_h5.py); any other suffix is refused with Keras 3's explanation
  (``model.save("mydir")`` once wrote HDF5 silently);
- ``.weights.h5``: Keras 3's weights layout (keras_weights_h5.py); other
  ``save_weights`` suffixes get tf.keras's weights layout (hdf5_format.py).

Reading looks at the content, not the name: a zip with ``config.json``, an
HDF5 file with ``layer_names`` (tf.keras, or minikeras's own older files),
or an HDF5 file with Keras 3's ``layers``/``vars`` groups.

Restored by ``load_model``: the architecture, the weights, the compile
arguments, the optimizer config and its state (step count, slots, current
learning rate) and, in minikeras's own ``.keras`` and ``.h5`` files, the
random generators (random_state.py: shuffling, the host stream of
augmentation and initializers, dropout and noise per device, the seeded
layers' own streams and SeedGenerators), so that training continues exactly
where it stopped, bit for bit. Not restored: metric states (reset at each
epoch anyway), ``History``, GPU generators (CuPy exposes no host-readable
state), and optimizer settings outside its config
(``exclude_from_weight_decay``).

Every write goes to a temporary file in the same folder, renamed into place
at the end (atomic.py): an interrupted save leaves the old file intact.
HDF5 files are written with HDF5's newest object formats (checksummed
metadata), a CRC-32 beside every weight dataset and one over the JSON
configs (_checksum.py); files from Keras, without them, still load.

Loading treats the file as untrusted data (_safety.py, _support/), whatever the
format: names resolve only against an allow-list, Lambda layers are refused
unless ``safe_mode=False``, sizes are checked before anything is read or
allocated, and every failure is the library's own error naming the file.
"""
import os
import warnings

import h5py

from minikeras._support import object_registration
from minikeras._support.load_budget import DEFAULT_MAX_BYTES
from minikeras.saving import _safety, hdf5_format, hdf5_links, keras_compile, keras_weights_h5, keras_zip, legacy_h5
from minikeras.saving.atomic import atomic_write
from minikeras.saving.versions import KERAS_VERSION, minikeras_version

_FORMAT_VERSION = "1"


def _check_model(model, what):
    from minikeras.models.model import Model

    if not isinstance(model, Model):
        raise TypeError(f"{what} expects a minikeras Model, received {type(model).__name__}.")


def _suffix_format(filepath, save_format):
    if save_format is not None:
        if save_format not in ("keras", "h5", "tf"):
            raise ValueError(f"Unknown save_format {save_format!r}: expected 'keras' or 'h5'.")
        if save_format == "tf":
            raise ValueError("save_format='tf' (TensorFlow SavedModel) is not supported by minikeras: "
                             "use a '.keras' or '.h5' file.")
        return save_format
    if isinstance(filepath, (h5py.Group, h5py.File)):
        return "h5"
    path = os.fspath(filepath)
    if path.endswith(".keras"):
        return "keras"
    if path.endswith((".h5", ".hdf5")) or not path.strip():
        return "h5"  # (an empty path is refused by atomic_write, naming what is expected)
    raise ValueError(
        "Invalid filepath extension for saving. Please add either a `.keras` extension for the native Keras "
        "format (recommended) or a `.h5` (or `.hdf5`) extension for the legacy HDF5 format. To save the weights "
        "alone, use `model.save_weights(filepath)` with a name ending in `.weights.h5`. minikeras has no "
        f"SavedModel export (TensorFlow's directory format). Received: filepath={path}")


def save_model(model, filepath, overwrite=True, include_optimizer=True, save_format=None):
    """Save architecture, weights and training state.

    Args:
        model: a Sequential or functional Model (or a subclassed model that
            implements ``get_config``).
        filepath: the file to write: ``"model.keras"`` (Keras 3 zip) or
            ``"model.h5"`` / ``"model.hdf5"`` (tf.keras HDF5); any other
            name is refused, as Keras 3 does.
        overwrite: if False and the file exists, raise FileExistsError.
        include_optimizer: also save the compile arguments, the optimizer
            config and its state (if the model is compiled).
        save_format: ``"keras"`` or ``"h5"`` to override the suffix.

    Raises:
        ValueError: the name ends in neither ``.keras`` nor ``.h5``/``.hdf5``
            (and no ``save_format`` says which).
        NotImplementedError: a subclassed model without ``get_config``.
        TypeError: a config that cannot be stored as JSON.
        FileExistsError: the file exists and ``overwrite`` is False.

    Example:
        >>> model.save("model.keras")  # doctest: +SKIP
        >>> restored = minikeras.models.load_model("model.keras")  # doctest: +SKIP
    """
    from minikeras.layers.preprocessing.feature_space import FeatureSpace

    if isinstance(model, FeatureSpace):  # Keras saves one through save_model too (.keras only)
        from minikeras.saving.feature_space_io import save_feature_space

        return save_feature_space(model, filepath, overwrite=overwrite)
    _check_model(model, "save_model")
    if _suffix_format(filepath, save_format) == "keras":
        legacy_h5._check_saveable(model)
        keras_zip.save_model(model, filepath, overwrite=overwrite, include_optimizer=include_optimizer)
    else:
        legacy_h5.save_model(model, filepath, overwrite=overwrite, include_optimizer=include_optimizer)


def load_model(filepath, custom_objects=None, compile=True, safe_mode=True,  # noqa: A002  (Keras argument name)
               max_bytes=DEFAULT_MAX_BYTES):
    """Load a model saved by Keras 3, tf.keras 2 or minikeras (any of their formats).

    A model file is data: class and function names in it resolve only
    against minikeras's own objects, registered ones and ``custom_objects``;
    nothing is imported or evaluated. Every weight dataset's shape, dtype
    and size is checked before any is read, and the rebuild may not
    allocate more than the file's weights justify.

    Args:
        filepath: a ``.keras`` zip or an HDF5 file (or an open h5py File).
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
        ValueError: not a model file, an unknown class (the message names it
            and points to ``custom_objects``), or weights that do not fit.
    """
    source = hdf5_format.describe(filepath)
    # custom_objects also resolve names met deep in configs (an activation=)
    # while the model is rebuilt, as inside Keras's custom_object_scope.
    with _safety.load_errors(source), object_registration.custom_object_scope(custom_objects):
        if not isinstance(filepath, (h5py.Group, h5py.File)) and keras_zip.is_keras_zip(os.fspath(filepath)):
            return keras_zip.load_model(os.fspath(filepath), custom_objects, compile, safe_mode, source, max_bytes)
        with hdf5_format.open_for_reading(filepath) as handle:
            return legacy_h5.load_model(handle, custom_objects, compile, safe_mode, source, max_bytes)


def save_weights(model, filepath, overwrite=True):
    """Save the weights of every layer (and, for ``.weights.h5``, the optimizer state).

    ``*.weights.h5`` gets Keras 3's layout (``layers/<name>/vars/<i>``),
    other names tf.keras's (``layer_names`` / ``weight_names``).

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
    if os.fspath(filepath).endswith(".keras"):
        raise ValueError(f"save_weights writes weights only, but {os.fspath(filepath)!r} names a whole-model "
                         ".keras file: use model.save(path) for it, or a name ending in '.weights.h5'.")
    keras_layout = os.fspath(filepath).endswith(".weights.h5")
    with atomic_write(filepath, overwrite=overwrite) as temporary:
        with h5py.File(temporary, "w", libver=hdf5_format.LIBVER) as handle:
            if keras_layout:
                optimizer = getattr(model, "optimizer", None)
                keras_weights_h5.write_model(handle, model, optimizer)
            else:
                handle.attrs["keras_version"] = KERAS_VERSION  # layers in Keras's order
                handle.attrs["minikeras_version"] = minikeras_version()
                handle.attrs["format_version"] = _FORMAT_VERSION
                hdf5_format.save_weights_to_group(handle, model)


def load_weights(model, filepath, skip_mismatch=False, by_name=False, max_bytes=DEFAULT_MAX_BYTES):
    """Load weights from any weights or model file of Keras 3, tf.keras or minikeras.

    Args:
        model: the model to fill; it must have the same layers with weights,
            in the same order (or the same names with ``by_name``).
        filepath: a ``.weights.h5``, ``.h5`` or ``.keras`` file (or an open h5py File).
        skip_mismatch: skip (with a warning) layers whose weight count or
            shapes differ, instead of raising.
        by_name: match layers by name (tf.keras layout); layers absent from
            the file keep their weights. Keras 3's layout always prefers a
            name match and falls back to the position.
        max_bytes: refuse datasets declaring more bytes than this (default
            4 GiB); None for no limit.

    Raises:
        FileNotFoundError: no file at ``filepath``.
        FileLoadError: a corrupt, truncated or tampered file.
        ValueError: not a weights file, or a layer/weight/shape mismatch (the
            message names the layer and the shapes). Nothing is changed then.
    """
    _check_model(model, "load_weights")
    source = hdf5_format.describe(filepath)
    with _safety.load_errors(source):
        _load_weights(model, filepath, skip_mismatch, by_name, source, max_bytes)


def _load_weights(model, filepath, skip_mismatch, by_name, source, max_bytes):
    if not isinstance(filepath, (h5py.Group, h5py.File)) and keras_zip.is_keras_zip(os.fspath(filepath)):
        import zipfile

        with zipfile.ZipFile(os.fspath(filepath)) as archive:
            data = keras_zip.read_member(archive, keras_zip.WEIGHTS, source, keras_zip.weights_limit(max_bytes, model),
                                         f"the weights and optimizer state of model '{model.name}'")
        with hdf5_links.open_contained(data, source) as handle:
            _load_keras_layout(model, handle, skip_mismatch, source, max_bytes)
        return
    with hdf5_format.open_for_reading(filepath) as handle:
        if hdf5_format.read_names(handle.attrs, "layer_names") is None and (
                "layers" in handle or ("vars" in handle and "model_weights" not in handle)):
            _load_keras_layout(model, handle, skip_mismatch, source, max_bytes)
            return
        group = handle
        if hdf5_format.read_names(handle.attrs, "layer_names") is None and "model_weights" in handle:
            group = handle["model_weights"]  # a whole-model file
        hdf5_format.load_weights_from_group(group, model, by_name=by_name, skip_mismatch=skip_mismatch,
                                            source=source, max_bytes=max_bytes,
                                            keras_order=not hdf5_format.is_minikeras_v1(handle.attrs))


def _load_keras_layout(model, handle, skip_mismatch, source, max_bytes):
    if not model.built and not model.weights:
        raise ValueError(
            f"Model '{model.name}' has not created its weights yet, so the weights in {source} cannot be loaded "
            "into it. Call the model on a batch of data (or build() it) first."
        )
    plan = keras_weights_h5.plan_model(handle, model, source, skip_mismatch=skip_mismatch,
                                       warn=lambda message: warnings.warn(message, stacklevel=6),
                                       max_bytes=max_bytes)
    keras_weights_h5.assign(plan, source)
    optimizer = getattr(model, "optimizer", None)
    saved = keras_weights_h5.read_optimizer(handle, source, model, max_bytes) if optimizer is not None else None
    if saved is not None and len(saved[0]) > 1:
        keras_compile.restore_optimizer(model, saved[0], saved[1], source,
                                        lambda message: warnings.warn(message, stacklevel=6))
