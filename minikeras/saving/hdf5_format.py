"""The HDF5 layout of weights, as in Keras's h5 format.

A weights group holds the attribute ``layer_names`` (every layer of the
model, in order, weightless ones included) and one sub-group per layer,
whose attribute ``weight_names`` lists its datasets in the layer's weight
order (``get_weights()`` order). Dataset names are the weight names
(``"dense/kernel"``, so stored at ``<group>/dense/dense/kernel``).
"""
import contextlib
import errno
import os
import warnings

import h5py
import numpy

from minikeras._support.load_budget import DEFAULT_MAX_BYTES, FileLoadError
from minikeras.backend.dtypes import is_float_dtype
from minikeras.saving import _bfloat16, _checksum, _inflation, _safety, hdf5_links

# HDF5 object headers hold at most 64 KiB; longer name lists are split into
# numbered attributes (``layer_names0``, ``layer_names1``, ...), as Keras does.
_ATTRIBUTE_LIMIT = 64512
# The newest HDF5 object formats carry checksums on every metadata block:
# a damaged header is then reported by HDF5 instead of being interpreted
# (a flipped byte in an old-format attribute header can crash the reader).
# Any h5py/HDF5 >= 1.10 reads them, Keras included.
LIBVER = "latest"


# ----------------------------------------------------------------- attributes
def write_names(attributes, key, names):
    """Store a list of strings in ``attributes[key]`` (chunked when large)."""
    encoded = [name.encode("utf8") for name in names]
    data = numpy.array(encoded, dtype=f"S{max([len(e) for e in encoded] + [1])}")
    if data.nbytes <= _ATTRIBUTE_LIMIT:
        attributes[key] = data
        return
    chunks = int(numpy.ceil(data.nbytes / _ATTRIBUTE_LIMIT))
    for index, chunk in enumerate(numpy.array_split(data, chunks)):
        attributes[f"{key}{index}"] = chunk


def read_names(attributes, key):
    """The list of strings stored by :func:`write_names` (None if absent)."""
    if key in attributes:
        values = list(attributes[key])
    elif f"{key}0" in attributes:
        values, index = [], 0
        while f"{key}{index}" in attributes:
            values.extend(attributes[f"{key}{index}"])
            index += 1
    else:
        return None
    return [value.decode("utf8") if isinstance(value, bytes) else str(value) for value in values]


def _dataset_name(name, index, used):
    """A dataset path not clashing with ``used`` (a weight name may be
    repeated, or be a prefix folder of another)."""
    base = (name or "").strip("/") or f"weight_{index}"
    candidate, suffix = base, 0
    while candidate in used or any(other.startswith(candidate + "/") or candidate.startswith(other + "/")
                                   for other in used):
        suffix += 1
        candidate = f"{base}_{suffix}"
    used.add(candidate)
    return candidate


def write_arrays(group, names, arrays):
    """Write ``arrays`` as datasets of ``group``; their order goes in the
    ``weight_names`` attribute."""
    used, stored = set(), []
    for index, (name, array) in enumerate(zip(names, arrays)):
        path = _dataset_name(name, index, used)
        dataset = _bfloat16.create_dataset(group, path, array)
        _checksum.store(dataset, array)
        stored.append(path)
    write_names(group.attrs, "weight_names", stored)


def read_datasets(group, source="the file", max_bytes=DEFAULT_MAX_BYTES):
    """The datasets listed in ``group.attrs["weight_names"]``, in order, as
    ``(name, h5py Dataset)``, each checked from its metadata (numeric, size
    within ``max_bytes``, stored in full) but not read."""
    names = read_names(group.attrs, "weight_names") or []
    found = []
    for name in names:
        if name not in group or not isinstance(group[name], h5py.Dataset):
            raise FileLoadError(f"{source}: weight {name!r} is listed in {group.name!r} but missing.")
        dataset = group[name]
        _safety.check_dataset(dataset, source, max_bytes=max_bytes)
        found.append((name, dataset))
    return found


def read_arrays(group, source="the file", max_bytes=DEFAULT_MAX_BYTES):
    """The datasets listed in ``group.attrs["weight_names"]``, in order: a list
    of ``(name, host array)``, each checked (see :func:`read_datasets`) before
    any is read."""
    return [(name, read_dataset(dataset, source)) for name, dataset in read_datasets(group, source, max_bytes)]


def read_dataset(dataset, source="the file"):
    """A checked dataset's values as a host array, verified against the
    checksum minikeras stores beside it (files without one pass)."""
    value = numpy.asarray(dataset[()])
    _checksum.verify(dataset, value, source)
    return _bfloat16.as_read(dataset, value)


# --------------------------------------------------------------- model weights
def weight_groups(model, keras_order=True):
    """``(group name, weights)`` for every layer of ``model``, in order.

    Weights a model holds directly (a subclassed model's ``add_weight``) come
    first, under the model's own name. ``keras_order`` lists a functional
    model's layers as Keras does (keras_order.py); minikeras's first files
    used ``model.layers`` order.
    """
    from minikeras.saving.keras_order import keras_layer_order

    groups, used = [], set()
    own = list(model._all_own_weights())
    layers = keras_layer_order(model) if keras_order else model.layers
    listed = _legacy_weights if keras_order else (lambda layer: layer.weights)
    owners = ([(model.name, own)] if own else []) + [(layer.name, listed(layer)) for layer in layers]
    for name, weights in owners:
        unique, suffix = name, 0
        while unique in used:
            suffix += 1
            unique = f"{name}_{suffix}"
        used.add(unique)
        groups.append((unique, list(weights)))
    return groups


def _legacy_weights(layer):
    """A layer's weights as tf.keras's HDF5 lists them: trainable ones first, then the others
    (it matters for a nested model: a BatchNormalization's moving statistics come last)."""
    weights = list(layer.trainable_weights)
    weights.extend(w for w in layer.non_trainable_weights if not any(w is seen for seen in weights))
    return weights


def save_weights_to_group(group, model):
    """Write every layer's weights into ``group`` (Keras's h5 layout)."""
    groups = weight_groups(model)
    write_names(group.attrs, "layer_names", [name for name, _ in groups])
    group.attrs["backend"] = "minikeras"
    for name, weights in groups:
        layer_group = group.create_group(name)
        write_arrays(layer_group, [weight.name for weight in weights],
                     [weight.numpy() for weight in weights])


def _saved_layers(group, source, max_bytes):
    names = read_names(group.attrs, "layer_names")
    if names is None:
        raise ValueError(f"{source} holds no layer weights (no 'layer_names' attribute): it was not written by "
                         "save_weights() or model.save().")
    missing = [name for name in names if name not in group or not isinstance(group[name], h5py.Group)]
    if missing:
        raise FileLoadError(f"{source}: the layers {missing} are listed but have no weights group.")
    return [(name, read_datasets(group[name], source, max_bytes)) for name in names]


def declared_weight_bytes(group, source, max_bytes=DEFAULT_MAX_BYTES):
    """The total size the weights under ``group`` declare, from metadata only
    (each dataset checked by :func:`read_datasets`)."""
    datasets = [dataset for _, named in _saved_layers(group, source, max_bytes) for _, dataset in named]
    total = sum(dataset.dtype.itemsize * int(numpy.prod(dataset.shape, dtype=object)) for dataset in datasets)
    _inflation.check_datasets_inflation(datasets, source, max_bytes)
    if max_bytes is not None and total > max_bytes:
        raise FileLoadError(f"{source}: its weights declare {total} bytes in all, over the limit "
                            f"max_bytes={max_bytes}. Pass a larger max_bytes if the file is trusted.")
    return total


def _check_layer(model_index, name, weights, saved_name, saved, source, owner=None):
    """Raise ValueError naming the layer (``owner``, when known) when counts or shapes differ, or when
    float values would be truncated into its integer weights."""
    if len(weights) != len(saved):
        raise ValueError(
            f"Weight count mismatch for layer #{model_index} (named '{name}' in the current model, "
            f"'{saved_name}' in {source}): the layer expects {len(weights)} weight(s), the file has "
            f"{len(saved)}."
        )
    for weight, (saved_weight, value) in zip(weights, saved):
        if tuple(value.shape) != tuple(weight.shape):
            raise ValueError(
                f"Shape mismatch in layer #{model_index} (named '{name}' in the current model, '{saved_name}' "
                f"in {source}) for weight '{weight.name}': the layer expects shape {tuple(weight.shape)}, the "
                f"file has shape {tuple(value.shape)} (saved as '{saved_weight}')."
            )
        _safety.check_not_truncated(value, weight, owner, source)


def is_minikeras_v1(attributes):
    """True for files of minikeras's first HDF5 format (written before the Keras formats)."""
    return "minikeras_version" in attributes and "keras_version" not in attributes


def load_weights_from_group(group, model, by_name=False, skip_mismatch=False, source="the file",
                            max_bytes=DEFAULT_MAX_BYTES, keras_order=True):
    """Set the model's weights from a group written by :func:`save_weights_to_group`.

    Every count and shape is checked before any weight changes, so a
    failed load leaves the model as it was.

    Args:
        group: the h5py group.
        model: the model to fill.
        by_name: match layers by name (layers missing from the file are left
            alone) instead of by position among the layers that have weights.
        skip_mismatch: skip layers whose weight count or shapes differ (with
            a warning) instead of raising.
        source: how to name the file in messages.
        max_bytes: refuse datasets declaring more bytes than this.
        keras_order: the file lists layers in Keras's order (False for
            minikeras's first files).

    Raises:
        ValueError: a layer count, weight count or shape mismatch, naming the
            layer and the shapes.
    """
    saved = _saved_layers(group, source, max_bytes)  # metadata only: nothing is read before the checks
    targets = [(name, weights) for name, weights in weight_groups(model, keras_order) if weights]
    if not targets and not getattr(model, "built", True) and any(arrays for _, arrays in saved):
        raise ValueError(
            f"Model '{model.name}' has not created its weights yet, so the weights in {source} cannot be loaded "
            "into it. Call the model on a batch of data (or build() it) first."
        )
    if by_name:
        by_layer = {}
        for saved_name, arrays in saved:
            by_layer.setdefault(saved_name, arrays)
        pairs = [(index, name, weights, name, by_layer[name])
                 for index, (name, weights) in enumerate(targets) if name in by_layer]
    else:
        saved = [(name, arrays) for name, arrays in saved if arrays]
        if len(saved) != len(targets):
            raise ValueError(
                f"Layer count mismatch when loading weights from {source}: the model has {len(targets)} layers "
                f"with weights ({[name for name, _ in targets]}), the file has {len(saved)} "
                f"({[name for name, _ in saved]})."
            )
        pairs = [(index, name, weights, saved_name, arrays)
                 for index, ((name, weights), (saved_name, arrays)) in enumerate(zip(targets, saved))]
    assignments, owners = [], {layer.name: layer for layer in [model, *model.layers]}
    for index, name, weights, saved_name, arrays in pairs:
        try:
            _check_layer(index, name, weights, saved_name, arrays, source, owners.get(name))
        except ValueError as error:
            if not skip_mismatch:
                raise
            warnings.warn(f"Skipping loading weights for layer '{name}': {error}", stacklevel=4)
            continue
        assignments.extend(zip(weights, (dataset for _, dataset in arrays)))
    values = [read_dataset(dataset, source) for _, dataset in assignments]  # every check passed: now read
    for (weight, _), value in zip(assignments, values):
        if value.dtype.kind not in "biu" and not is_float_dtype(value.dtype):
            raise FileLoadError(f"{source}: weight {weight.name!r} holds {value.dtype} data.")
        weight.assign(value.astype(weight.dtype, copy=False))


# ------------------------------------------------------------------ opening
def describe(filepath):
    """A path (or an h5py object) as it is named in messages."""
    if isinstance(filepath, (h5py.Group, h5py.File)):
        return f"'{filepath.file.filename}'"
    return repr(os.fspath(filepath))


@contextlib.contextmanager
def open_for_reading(filepath):
    """Open an HDF5 file (or pass an open h5py group through), raising clear
    errors for a missing path or a file that is not HDF5, and refusing one
    that reaches outside itself (hdf5_links.py)."""
    if isinstance(filepath, (h5py.Group, h5py.File)):
        hdf5_links.check_contained(filepath, describe(filepath))
        yield filepath
        return
    path = os.fspath(filepath)
    if not os.path.exists(path):
        raise FileNotFoundError(errno.ENOENT, "No file found at this path (expected an HDF5 file saved by minikeras)",
                                path)
    if os.path.isdir(path):
        raise IsADirectoryError(errno.EISDIR, "Expected an HDF5 file saved by minikeras, found a folder", path)
    if not h5py.is_hdf5(path):
        raise ValueError(
            f"The file {path!r} is not an HDF5 file nor a .keras zip: minikeras reads and writes Keras's formats "
            "(model.save('model.keras') or 'model.h5', model.save_weights('model.weights.h5'))."
        )
    with h5py.File(path, "r") as handle:
        hdf5_links.check_contained(handle, repr(path))
        yield handle
