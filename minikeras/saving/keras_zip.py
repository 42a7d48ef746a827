"""Keras 3's native ``.keras`` file: a zip of ``metadata.json``, ``config.json``
and ``model.weights.h5``.

``config.json`` is the model's spec in Keras's schema (keras_config.py) with
its ``compile_config``; ``model.weights.h5`` uses Keras's weights layout
(keras_weights_h5.py), the optimizer state included when the model is
compiled. The zip's members are read into memory after their sizes are
checked, and inflated with a running count: the weights member no further
than the rebuilt model needs (_inflation.py); nothing in the archive is
extracted to disk or executed.

minikeras also stores the random generators' state (random_state.py) as an
attribute of ``model.weights.h5``'s root when the optimizer is saved, and
adds ``minikeras_config_crc32`` to ``metadata.json`` (the CRC-32 of
``config.json``) and a CRC-32 beside each weight dataset, verified on load;
Keras's files have neither and load without. Loading follows _safety.py and the guards in _support/:
dataset sizes are checked before the model is rebuilt, the rebuild runs in
safe mode and within the budget the file's weights justify.
"""
import contextlib
import datetime
import io
import json
import warnings
import zipfile

import h5py

from minikeras._support import load_budget
from minikeras._support.load_budget import DEFAULT_MAX_BYTES, FileLoadError
from minikeras._support.safe_mode import safe_mode_scope
from minikeras.saving import (_checksum, _inflation, hdf5_format, hdf5_links, keras_compile, keras_config,
                              keras_config_writer, keras_weights_h5)
from minikeras.saving.atomic import atomic_write
from minikeras.saving.random_state import read_random_state, write_random_state
from minikeras.saving.versions import KERAS_VERSION, minikeras_version

CONFIG, METADATA, WEIGHTS = "config.json", "metadata.json", "model.weights.h5"
# A config larger than this is not a model config; weights may be large.
_MAX_CONFIG_BYTES = 64 * 1024 * 1024
# Members are inflated this much at a time, counted as they come.
_READ_BYTES = 2**20


def is_keras_zip(filepath):
    """True if ``filepath`` is a zip holding a ``config.json`` (a ``.keras`` file)."""
    try:
        if not zipfile.is_zipfile(filepath):
            return False
        with zipfile.ZipFile(filepath) as archive:
            return CONFIG in archive.namelist()
    except OSError:
        return False


def save_model(model, filepath, overwrite=True, include_optimizer=True):
    """Write ``model`` as a Keras 3 ``.keras`` zip (atomically).

    Args:
        model: a Sequential, functional or registered subclassed model.
        filepath: the ``.keras`` path.
        overwrite: if False and the file exists, raise FileExistsError.
        include_optimizer: also save the compile config and the optimizer state.
    """
    with atomic_write(filepath, overwrite=overwrite) as temporary:
        write_archive(model, temporary, include_optimizer)


def write_archive(model, target, include_optimizer=True):
    """Write ``model``'s ``.keras`` zip to ``target`` (a path or a binary file
    object; ``pickled_model.py`` writes one into memory)."""
    spec = keras_config_writer.to_keras(model)
    compiled = include_optimizer and getattr(model, "optimizer", None) is not None
    spec["compile_config"] = keras_compile.model_compile_config(model) if compiled else None
    config_text = json.dumps(spec, default=_json_default)
    metadata = {"keras_version": KERAS_VERSION, "minikeras_version": minikeras_version(),
                "date_saved": datetime.datetime.now().strftime("%Y-%m-%d@%H:%M:%S"),
                _checksum.CONFIG_ATTRIBUTE: _checksum.config_crc32(config_text)}
    weights = io.BytesIO()
    with h5py.File(weights, "w", libver=hdf5_format.LIBVER) as handle:
        keras_weights_h5.write_model(handle, model, model.optimizer if compiled else None)
        if compiled:
            write_random_state(handle, model)  # an attribute of the weights file's root: Keras ignores it
    with zipfile.ZipFile(target, "w") as archive:
        archive.writestr(METADATA, json.dumps(metadata))
        archive.writestr(CONFIG, config_text)
        archive.writestr(WEIGHTS, weights.getvalue(), compress_type=zipfile.ZIP_STORED)
        from minikeras.saving import keras_assets  # it reads members with this module's member_size

        for name, text in keras_assets.asset_members(model).items():
            archive.writestr(name, text)


def _json_default(value):
    import numpy

    if isinstance(value, numpy.generic):
        return value.item()
    if isinstance(value, numpy.ndarray):
        return value.tolist()
    if isinstance(value, tuple):
        return list(value)
    raise TypeError(f"{type(value).__name__} {value!r} is not JSON-serializable")


def member_size(archive, name, source, limit=None, what="it"):
    """The size a member declares, checked from the zip's directory (nothing
    inflated) against ``limit`` (``what`` names what may not be larger) and
    against the ratio real data compresses to (_inflation.py)."""
    try:
        info = archive.getinfo(name)
    except KeyError:
        raise FileLoadError(f"{source} is not a complete .keras file: it has no '{name}'.") from None
    if limit is not None and info.file_size > limit:
        raise FileLoadError(f"'{name}' in {source} is {info.file_size} bytes, more than {what} can be "
                            f"({limit} bytes).")
    _inflation.check_inflation(info.file_size, info.compress_size, f"its member '{name}'", source, limit)
    return info.file_size


def read_member(archive, name, source, limit=None, what="it"):
    """A member's bytes as a BytesIO, once :func:`member_size` passes, inflated
    a megabyte at a time with a running count: reading stops at ``limit``
    whatever the directory claims."""
    member_size(archive, name, source, limit, what)
    data, total = io.BytesIO(), 0
    with archive.open(name) as member:
        while True:
            chunk = member.read(_READ_BYTES)
            if not chunk:
                return data
            total += len(chunk)
            if limit is not None and total > limit:
                raise FileLoadError(f"'{name}' in {source} inflates past {limit} bytes, more than {what} "
                                    "can be (its zip directory understates it: the file is crafted).")
            data.write(chunk)


def weights_limit(max_bytes, model=None):
    """The largest weights member accepted: ``max_bytes`` plus HDF5 metadata,
    and no more than ``model`` needs (None: no limit)."""
    if max_bytes is None:
        return None
    limit = max_bytes + _inflation.HDF5_OVERHEAD_BYTES
    return limit if model is None else min(limit, _inflation.model_needed_bytes(model))


def _verify_config(archive, config_bytes, source):
    """Check config.json against the CRC-32 minikeras put in metadata.json (absent in Keras's files)."""
    if METADATA not in archive.namelist():
        return
    metadata = json.loads(read_member(archive, METADATA, source, _MAX_CONFIG_BYTES, "metadata").getvalue())
    expected = metadata.get(_checksum.CONFIG_ATTRIBUTE) if isinstance(metadata, dict) else None
    if expected is not None and expected != _checksum.config_crc32(config_bytes.decode("utf8")):
        raise FileLoadError(f"{source}: its config.json fails its integrity check (CRC-32 mismatch): the "
                            "file is corrupt or was modified after minikeras wrote it.")


def build_from_spec(model, spec):
    """Create a subclassed model's weights from ``build_config`` (call it on zeros), as Keras does; a
    model with its own ``build_from_config`` is given the config."""
    from minikeras.layers.build_config import build_from_saved, overrides

    if model.built or model.weights:
        return
    if overrides(model, "build_from_config"):
        build_from_saved(model, spec.get("build_config"))
        return
    shape = (spec.get("build_config") or {}).get("input_shape")
    if shape is None:
        return
    import numpy

    def zeros(item):
        return numpy.zeros([1 if size is None else size for size in item], dtype="float32")

    nested = isinstance(shape[0], (list, tuple)) if shape else False
    model(zeros(shape) if not nested else [zeros(item) for item in shape])


def load_model(filepath, custom_objects=None, compile=True, safe_mode=True, source=None,  # noqa: A002
               max_bytes=DEFAULT_MAX_BYTES):
    """Read a ``.keras`` zip written by Keras 3 or minikeras.

    Args:
        filepath: the file.
        custom_objects: ``{name: class or function}`` for classes not in minikeras.
        compile: compile with the saved compile config and restore the optimizer state.
        safe_mode: refuse layers that would run code from the file (Lambda).
        source: how to name the file in messages.
        max_bytes: refuse weights declaring more bytes than this (None: no limit).

    Returns:
        The model.
    """
    from minikeras.layers.base import layer_from_config

    source = source or repr(str(filepath))
    with zipfile.ZipFile(filepath) as archive:
        config_bytes = read_member(archive, CONFIG, source, _MAX_CONFIG_BYTES, "a model config").getvalue()
        _verify_config(archive, config_bytes, source)
        # The rebuild's budget comes from what the weights member declares (a
        # credible ratio of its compressed size); the member is then inflated
        # only up to what the rebuilt model needs.
        weight_bytes = member_size(archive, WEIGHTS, source, weights_limit(max_bytes), "weights under max_bytes")
        spec = json.loads(config_bytes)
        if not isinstance(spec, dict) or not isinstance(spec.get("class_name"), str):
            raise FileLoadError(f"The model config in {source} is malformed: expected "
                                "{'class_name', 'config'}.")
        if spec["class_name"] == "FeatureSpace":  # keras.utils.FeatureSpace.save(): not a model
            from minikeras.saving.feature_space_io import load_feature_space

            return load_feature_space(archive, spec, custom_objects, safe_mode, source, max_bytes)
        with contextlib.ExitStack() as stack:
            # One budget for the whole load: the layers' weights and probes, what the config's sizes make them
            # hold, and the vocabularies of the assets.
            with safe_mode_scope(safe_mode), load_budget.loading_budget(weight_bytes, source, max_bytes):
                converted = keras_config.to_minikeras(spec, custom_objects, safe_mode, source)
                cls = keras_config.resolve_layer_class(spec["class_name"], spec.get("registered_name"),
                                                       custom_objects, source)
                model = layer_from_config(cls, converted["config"], custom_objects)
                build_from_spec(model, spec)
                weights = read_member(archive, WEIGHTS, source, weights_limit(max_bytes, model),
                                      f"the weights and optimizer state of model '{model.name}'")
                from minikeras.saving import keras_assets  # it reads members with this module's member_size

                handle = stack.enter_context(hdf5_links.open_contained(weights, source))
                keras_weights_h5.declared_bytes(handle, source, max_bytes)
                plan = keras_weights_h5.plan_model(handle, model, source, max_bytes=max_bytes)
                keras_assets.apply_assets(keras_assets.read_assets(archive, model, source), handle, source, max_bytes)
            keras_weights_h5.assign(plan, source)
            if compile and spec.get("compile_config"):
                with safe_mode_scope(safe_mode):
                    compiled = keras_compile.model_compile_from_config(model, spec["compile_config"],
                                                                       custom_objects, source)
                if compiled:
                    saved = keras_weights_h5.read_optimizer(handle, source, model, max_bytes)
                    if saved is not None:
                        keras_compile.restore_optimizer(model, saved[0], saved[1], source, _warn)
                    read_random_state(handle, model, source)
    return model


def _warn(message):
    warnings.warn(message, stacklevel=4)
