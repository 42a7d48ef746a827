"""Keras 3's weights layout (``.weights.h5``, and ``model.weights.h5`` in a ``.keras`` zip).

Keras 3 saves objects, not layers in a list: each object's own variables
are the datasets ``<path>/vars/0``, ``<path>/vars/1``... (trainable first,
then non-trainable, in creation order), and each sub-object lives under a
path named after the attribute holding it. A model's layers are the
container ``layers``, each named by its class in snake case, made unique
in order (``layers/dense``, ``layers/dense_1``); every ``vars`` group has a
``name`` attribute with the object's own name. The optimizer is
``optimizer/vars``: the step count, the learning rate, then the slots.

The mapping is generic: a layer's own weights go to ``vars``, and its
sublayers are found in its attributes (sorted by attribute name, private
ones last, as Keras walks them). A new layer plugs in with no entry when it
creates its weights in Keras's order and shapes (PReLU, GroupNormalization,
Conv3D...) and keeps sublayers under Keras's attribute names; otherwise one
entry describes the difference:

- :data:`OWN_WEIGHTS_PATH`: Keras keeps the layer's own weights in a
  sub-object (an RNN's ``cell``);
- :data:`SUBLAYERS`: Keras's names for the layer's sublayers (e.g.
  ``"MultiHeadAttention": lambda layer: [("_query_dense", layer.query), ...]``
  if minikeras named them otherwise).

Shapes are checked against the file before anything is read, so a layer
whose weight layout differs from Keras's fails loudly, never silently; so
are dtypes and declared sizes (_safety.check_dataset). minikeras writes a
CRC-32 beside each dataset (_checksum.py), verified on load; Keras's files
have none and load without.
"""
import numpy

from minikeras._support.load_budget import DEFAULT_MAX_BYTES, FileLoadError
from minikeras import backend
from minikeras.saving import _bfloat16, _checksum, _inflation, _safety
from minikeras.layers.naming import to_snake_case
from minikeras.saving.keras_order import keras_layer_order, keras_trainable_order, state_in_order

# Layers whose own weights Keras keeps in sub-objects: a path for all of them
# (an RNN's cell), or {weight-name prefix: path} (MultiHeadAttention's
# "query/kernel" is Keras's "query_dense/vars/0").
OWN_WEIGHTS_PATH = {
    "LSTM": "cell", "GRU": "cell", "SimpleRNN": "cell",
    "ConvLSTM1D": "cell", "ConvLSTM2D": "cell", "ConvLSTM3D": "cell",
    "MultiHeadAttention": {"query": "query_dense", "key": "key_dense", "value": "value_dense",
                           "attention_output": "output_dense"},
}

# Layers whose sublayers Keras names differently from minikeras's attributes
# (or that keep them somewhere a generic walk would not look).
SUBLAYERS = {
    "Bidirectional": lambda layer: [("forward_layer", layer.forward_layer), ("backward_layer", layer.backward_layer)],
    "TimeDistributed": lambda layer: [("layer", layer.layer)],
}


def _is_layer(value):
    from minikeras.layers.base import Layer

    return isinstance(value, Layer)


def _is_model(layer):
    from minikeras.models.model import Model

    return isinstance(layer, Model)


def _is_model_container(layer):
    from minikeras.models.functional import Functional
    from minikeras.models.sequential import Sequential

    return isinstance(layer, (Functional, Sequential))


def own_weights(layer):
    """The weights a layer holds itself, in Keras's ``vars`` order (a layer
    whose file layout differs from its weights says so: LoRA's merged kernel)."""
    saved = getattr(layer, "_keras_saved_weights", None)
    if saved is not None:
        return saved()
    return list(layer._trainable_weights) + list(layer._non_trainable_weights)


def named_variables(layer):
    """``{name: array or None}``: what Keras saves under a name rather than an
    index (a TF-IDF lookup's ``idf_weights``, not one of its weights); None
    where the layer has nothing yet (not adapted)."""
    hook = getattr(layer, "_keras_named_variables", None) if layer is not None else None
    return hook() if hook is not None else {}


def _container_names(layers):
    """Keras's names for a list of layers: snake-cased class, made unique in order."""
    counts, names = {}, []
    for layer in layers:
        base = to_snake_case(type(layer).__name__)
        count = counts.get(base, 0)
        counts[base] = count + 1
        names.append(base if count == 0 else f"{base}_{count}")
    return names


def children(layer):
    """``[(key, sublayer or [sublayers])]``: where Keras saves each sub-object of ``layer``."""
    kind = type(layer).__name__
    if _is_model_container(layer):
        return [("layers", keras_layer_order(layer))]
    if kind in SUBLAYERS:
        return SUBLAYERS[kind](layer)
    found = []
    attributes = dict(vars(layer))
    if _is_model(layer):
        attributes["layers"] = list(layer.layers)  # Keras also walks a model's ``layers`` property
    # Keras walks attributes in name order, private ones last.
    for key in sorted(attributes, key=lambda name: f"~{name}" if name.startswith("_") else name):
        value = attributes[key]
        if _is_layer(value) and value is not layer:
            found.append((key, value))
        elif isinstance(value, (list, tuple)) and value and all(_is_layer(item) for item in value):
            found.append((key, list(value)))
    return found


def walk_objects(layer, path="", visited=None):
    """Every object of ``layer``, depth first, as ``(path, object)``: the
    paths Keras gives its ``vars`` groups and its ``assets/`` folders. An
    object reachable twice (a shared layer) comes at its first path only."""
    visited = set() if visited is None else visited
    if id(layer) in visited:
        return
    visited.add(id(layer))
    yield path, layer
    for key, child in children(layer):
        if isinstance(child, list):
            for name, item in zip(_container_names(child), child):
                yield from walk_objects(item, _join(path, key, name), visited)
        else:
            yield from walk_objects(child, _join(path, key), visited)


def walk(layer, path="", visited=None):
    """Every object of ``layer`` with its weights: ``[(path, name, weights)]``.

    ``path`` is where its ``vars`` group lives ("" for the root); ``name`` is
    the object's own name (the ``name`` attribute Keras writes).
    """
    return [(where, name, weights) for where, name, weights, _ in _entries(layer, path, visited)]


def _entries(layer, path="", visited=None):
    """:func:`walk`'s entries with the layer each describes last (None for a
    group Keras keeps a layer's weights in, an RNN's ``cell``)."""
    entries = []
    for where, obj in walk_objects(layer, path, visited):
        kind = type(obj).__name__
        weights = own_weights(obj)
        placement = OWN_WEIGHTS_PATH.get(kind)
        if isinstance(placement, str):
            entries += [(where, obj.name, [], obj),
                        (_join(where, placement), f"{to_snake_case(kind)}_{placement}", weights, None)]
        elif isinstance(placement, dict):
            entries += _split_by_prefix(obj, where, weights, placement)
        else:
            entries.append((where, obj.name, weights, obj))
    return entries


def _split_by_prefix(layer, path, weights, placement):
    """Own weights named ``<prefix>/<name>`` go to ``placement[prefix]`` (named ``prefix``), the rest stay."""
    kept, moved = [], {}
    for weight in weights:
        short = weight.name[len(layer.name) + 1:] if weight.name.startswith(layer.name + "/") else weight.name
        prefix = short.split("/", 1)[0]
        if prefix in placement and "/" in short:
            moved.setdefault(prefix, []).append(weight)
        else:
            kept.append(weight)
    return [(path, layer.name, kept, layer)] + [(_join(path, placement[prefix]), prefix, group, None)
                                                for prefix, group in moved.items()]


def _join(*parts):
    return "/".join(part for part in parts if part)


# ------------------------------------------------------------------ writing
def _write(variables, name, array):
    """One weight's dataset (bfloat16 as Keras stores it), with its checksum."""
    _checksum.store(_bfloat16.create_dataset(variables, name, array), array)


def write_model(group, model, optimizer=None):
    """Write ``model``'s weights (and ``optimizer``'s state) into an open h5py group."""
    for path, name, weights, obj in _entries(model):
        variables = group.require_group(_join(path, "vars"))
        variables.attrs["name"] = name
        for index, weight in enumerate(weights):
            _write(variables, str(index), backend.to_numpy(weight.data))
        for key, array in named_variables(obj).items():
            if array is not None:
                _write(variables, key, numpy.asarray(array))
    if optimizer is not None:
        write_optimizer(group.require_group("optimizer"), optimizer, model)


def write_optimizer(group, optimizer, model):
    """``optimizer/vars``: step count, learning rate, then the slots (Keras 3's order)."""
    variables = group.require_group("vars")
    variables.attrs["name"] = optimizer.name
    state = state_in_order(optimizer, keras_trainable_order(model))
    # A LossScaleOptimizer saves its own unused rate (0), as Keras does.
    learning_rate = getattr(optimizer, "saved_learning_rate", None)
    learning_rate = optimizer.learning_rate if learning_rate is None else learning_rate
    arrays = [state[0], numpy.asarray(learning_rate, dtype="float32")] + list(state[1:])
    for index, array in enumerate(arrays):
        _write(variables, str(index), numpy.asarray(array))
    inner = getattr(optimizer, "inner_optimizer", None)
    if inner is not None:  # Keras also writes a LossScaleOptimizer's inner optimizer on its own
        write_optimizer(group.require_group("inner_optimizer"), inner, model)
    inners = getattr(optimizer, "optimizers", None)
    if isinstance(inners, list):  # ... and each of a MultiOptimizer's, under optimizers/<snake_case class>
        for name, each in zip(_container_names(inners), inners):
            write_optimizer(group.require_group(_join("optimizers", name)), each, model)


# ------------------------------------------------------------------ reading
def _datasets(variables, source, path, named=()):
    """The ``vars`` datasets in index order; a clear error for anything else
    in the group but the ``named`` datasets (named_variables(), read elsewhere)."""
    import h5py

    keys = [key for key in variables.keys() if key not in named]
    if not all(key.isdigit() for key in keys) or sorted(int(k) for k in keys) != list(range(len(keys))):
        raise ValueError(f"Malformed weights group '{path}/vars' in {source}: expected datasets named 0..n-1, "
                         f"found {sorted(keys)[:10]}.")
    datasets = [variables[str(index)] for index in range(len(keys))]
    if not all(isinstance(dataset, h5py.Dataset) for dataset in datasets):
        raise ValueError(f"Malformed weights group '{path}/vars' in {source}: its entries must be datasets.")
    return datasets


def _find_vars(group, path, name):
    """The ``vars`` group for an object: at its path, or else the sibling saved under its name.

    Paths depend on layer order and class names; names survive when a model
    is rebuilt from its own config, so a name match wins when the path holds
    another object.
    """
    at_path = group.get(_join(path, "vars"))
    if at_path is not None and _attribute(at_path, "name") in (name, None):
        return at_path
    parent = group.get(path.rsplit("/", 1)[0]) if "/" in path else None
    if parent is not None:
        for sibling in parent.values():
            variables = sibling.get("vars") if hasattr(sibling, "get") else None
            if variables is not None and _attribute(variables, "name") == name:
                return variables
    return at_path


def _attribute(group, key):
    value = group.attrs.get(key)
    return value.decode("utf8") if isinstance(value, bytes) else value


def check_dataset(dataset, weight, where, source, max_bytes=DEFAULT_MAX_BYTES, owner=None):
    """Raise ValueError unless ``dataset`` fits ``weight`` of the layer ``owner`` (shape, numeric dtype,
    size stored, float values not truncated into an integer weight), before reading it."""
    if tuple(dataset.shape) != tuple(weight.shape):
        raise ValueError(
            f"Shape mismatch for weight '{weight.name}' ({where} in {source}): the model expects shape "
            f"{tuple(weight.shape)}, the file has {tuple(dataset.shape)}."
        )
    if dataset.dtype.kind not in "fiub" and not _bfloat16.is_bfloat16_dataset(dataset):
        raise ValueError(f"Weight '{weight.name}' ({where} in {source}) is stored with dtype {dataset.dtype}, "
                         "expected a numeric array.")
    _safety.check_dataset(dataset, source, expected_shape=weight.shape, max_bytes=max_bytes)
    _safety.check_not_truncated(dataset, weight, owner, source)


def declared_bytes(group, source, max_bytes=DEFAULT_MAX_BYTES):
    """The total size every dataset under ``group`` declares, each checked
    from its metadata (numeric, stored in full), nothing read."""
    import h5py

    datasets = []
    group.visititems(lambda _, item: datasets.append(item) if isinstance(item, h5py.Dataset) else None)
    total = sum(_safety.check_dataset(dataset, source, max_bytes=max_bytes) for dataset in datasets)
    _inflation.check_datasets_inflation(datasets, source, max_bytes)
    if max_bytes is not None and total > max_bytes:
        raise FileLoadError(f"{source}: its weights declare {total} bytes in all, over the limit "
                            f"max_bytes={max_bytes}. Pass a larger max_bytes if the file is trusted.")
    return total


def plan_model(group, model, source, skip_mismatch=False, warn=None, max_bytes=DEFAULT_MAX_BYTES):
    """Match every weight of ``model`` with its dataset; nothing is read yet.

    Returns:
        ``[(weight, dataset)]``.

    Raises:
        ValueError: a missing group, a count or shape mismatch (unless
            ``skip_mismatch``, then ``warn(message)`` is called and the
            object is skipped).
    """
    plan = []
    for path, name, weights, obj in _entries(model):
        where = f"'{_join(path, 'vars')}' (object '{name}')"
        try:
            variables = _find_vars(group, path, name)
            if variables is None:
                if not weights:
                    continue
                raise ValueError(f"No weights for '{name}' in {source}: the group {where} is missing.")
            datasets = _datasets(variables, source, path, named_variables(obj))
            if len(datasets) != len(weights):
                raise ValueError(
                    f"Weight count mismatch for '{name}' ({where} in {source}): the model expects "
                    f"{len(weights)} weight(s) {[tuple(w.shape) for w in weights]}, the file has {len(datasets)} "
                    f"{[tuple(d.shape) for d in datasets]}."
                )
            for weight, dataset in zip(weights, datasets):
                check_dataset(dataset, weight, where, source, max_bytes, owner=obj)
            named = _plan_named(variables, obj, where, source, max_bytes)
        except ValueError as error:
            if not skip_mismatch:
                raise
            warn(f"Skipping loading weights for '{name}': {error}")
            continue
        plan.extend(list(zip(weights, datasets)) + named)
    return plan


class _NamedTarget:
    """One of :func:`named_variables` as :func:`assign` takes a weight: the
    layer's ``_keras_assign_named(key, array)`` stores it."""

    def __init__(self, layer, key, current):
        self.layer, self.key = layer, key
        self.name, self.shape, self.dtype = f"{layer.name}/{key}", tuple(current.shape), current.dtype

    def assign(self, value):
        self.layer._keras_assign_named(self.key, value)


def _plan_named(variables, obj, where, source, max_bytes):
    """``[(target, dataset)]`` for the named datasets of ``variables`` that
    ``obj`` holds a value for (Keras assigns a TF-IDF lookup's ``idf_weights``
    on load); those it has none for yet are left to keras_assets.py."""
    plan = []
    for key, current in named_variables(obj).items():
        if current is None or key not in variables:
            continue
        target = _NamedTarget(obj, key, numpy.asarray(current))
        check_dataset(variables[key], target, where, source, max_bytes)
        plan.append((target, variables[key]))
    return plan


def _read(dataset, source):
    """A checked dataset's values, verified against minikeras's checksum (if any)."""
    value = numpy.asarray(dataset[()])
    _checksum.verify(dataset, value, source)
    return _bfloat16.as_read(dataset, value)


def assign(plan, source="the file"):
    """Read every planned dataset, then assign them (cast to each weight's
    dtype): a failed read or checksum leaves the model unchanged."""
    values = [_read(dataset, source) for _, dataset in plan]
    for (weight, _), value in zip(plan, values):
        weight.assign(value.astype(weight.dtype, copy=False))


def read_optimizer(group, source, model=None, max_bytes=DEFAULT_MAX_BYTES):
    """The optimizer arrays of ``optimizer/vars`` as minikeras's ``set_state`` list and the learning rate.

    Returns:
        ``(state, learning_rate)``, or None when the file has no optimizer.
    """
    variables = group.get("optimizer/vars")
    if variables is None:
        return None
    datasets = _datasets(variables, source, "optimizer")
    if len(datasets) < 2:
        raise ValueError(f"Malformed optimizer state in {source}: expected the step count and the learning rate "
                         f"first, found {len(datasets)} arrays.")
    declared = sum(_safety.check_dataset(dataset, source, max_bytes=max_bytes) for dataset in datasets)
    if model is not None:
        _safety.check_optimizer_bytes(declared, model, source, max_bytes)
    arrays = [_read(dataset, source) for dataset in datasets]
    state = [numpy.asarray(arrays[0], dtype=numpy.int64)] + arrays[2:]
    return state, float(arrays[1])
