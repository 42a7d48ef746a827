"""``FeatureSpace.save`` and loading it back: Keras 3's ``.keras`` layout for
a FeatureSpace, which ``keras.models.load_model`` and minikeras's
``models.load_model`` both read.

The zip holds ``config.json`` (``{"module": "keras.utils", "class_name":
"FeatureSpace", "config", "build_config"}``: each feature's preprocessor in
Keras's schema, the build config keyed by feature name),
``model.weights.h5`` (groups ``preprocessors/<snake_case class>``,
``crossers/...``, ``one_hot_encoders/...``, ``concat`` and the root, each
with its ``vars``: a Normalization's mean, variance and count) and, for each
lookup layer, ``assets/preprocessors/<snake_case class>/vocabulary.txt``
(the vocabulary, special tokens first, one per line). minikeras also keeps
the vocabulary in the preprocessor's config, as its lookup layers always
do; Keras then reads it from there and skips the asset. A file from Keras
(vocabulary only in the assets, ``TFDIdentity`` for plain floats) loads
here too. Reading follows keras_zip.py's checks: member sizes before
inflating, weight shapes before reading, names only from the registry.
"""
import datetime
import io
import json
import zipfile

import h5py

from minikeras._support import load_budget
from minikeras._support.safe_mode import safe_mode_scope
from minikeras.layers.preprocessing.feature_space_specs import FEATURE_MODULE as _FEATURE_MODULE
from minikeras.layers.naming import to_snake_case
from minikeras.saving import _checksum, hdf5_format, hdf5_links, keras_assets, keras_config, keras_weights_h5
from minikeras.saving.atomic import atomic_write
from minikeras.saving.keras_config_writer import to_keras
from minikeras.saving.keras_zip import CONFIG, METADATA, WEIGHTS, _json_default, member_size, read_member, weights_limit
from minikeras.saving.versions import KERAS_VERSION, minikeras_version


def _is_plain_identity(layer):
    """minikeras's Identity, which a FeatureSpace's float feature is written as
    (Keras's FeatureSpace.float uses its own TFDIdentity, the same identity)."""
    from minikeras.layers.core.identity import Identity

    return type(layer) is Identity


def _containers(space):
    """``[(group path, {key: layer})]``, keys as Keras names them: its class in snake case, made unique."""
    containers = []
    for attribute in ("crossers", "one_hot_encoders", "preprocessors"):
        layers, counts, named = list(getattr(space, attribute).values()), {}, {}
        for layer in layers:
            base = "tfd_identity" if _is_plain_identity(layer) else to_snake_case(type(layer).__name__)
            counts[base] = counts.get(base, 0) + 1
            named[base if counts[base] == 1 else f"{base}_{counts[base] - 1}"] = layer
        containers.append((attribute, named))
    return containers


def _feature_spec(feature, build_config):
    spec = to_keras(feature.preprocessor)
    if _is_plain_identity(feature.preprocessor):
        spec.update(module=_FEATURE_MODULE, class_name="TFDIdentity", registered_name="TFDIdentity")
    spec["build_config"] = build_config
    return {"module": _FEATURE_MODULE, "class_name": "Feature",
            "config": {"dtype": feature.dtype, "preprocessor": spec, "output_mode": feature.output_mode},
            "registered_name": "Feature"}


def _lookup_vocabulary(layer):
    from minikeras.layers.preprocessing.index_lookup import IntegerLookup, StringLookup

    if isinstance(layer, (IntegerLookup, StringLookup)) and layer.vocabulary_size() > len(layer._special_tokens()):
        return layer.get_vocabulary()
    return None


def save_feature_space(space, filepath, overwrite=True):
    """Write ``space`` (adapted or not) as a Keras ``.keras`` file, atomically."""
    import os

    if not str(os.fspath(filepath)).endswith(".keras"):
        raise ValueError(f"Invalid `filepath` argument: expected a `.keras` extension. Received: filepath={filepath}")
    config = space.get_config()
    build_config = space.get_build_config()
    config["features"] = {name: _feature_spec(feature, build_config[name]) for name, feature in space.features.items()}
    spec = {"module": "keras.utils", "class_name": "FeatureSpace", "config": config, "registered_name": None,
            "build_config": build_config}
    config_text = json.dumps(spec, default=_json_default)
    metadata = {"keras_version": KERAS_VERSION, "minikeras_version": minikeras_version(),
                "date_saved": datetime.datetime.now().strftime("%Y-%m-%d@%H:%M:%S"),
                _checksum.CONFIG_ATTRIBUTE: _checksum.config_crc32(config_text)}
    weights, assets = io.BytesIO(), {}
    with h5py.File(weights, "w", libver=hdf5_format.LIBVER) as handle:
        for path, layers in _containers(space):
            for key, layer in layers.items():
                _write_vars(handle, f"{path}/{key}", layer.name, keras_weights_h5.own_weights(layer))
                vocabulary = _lookup_vocabulary(layer) if path == "preprocessors" else None
                if vocabulary is not None:
                    assets[keras_assets.member(f"{path}/{key}")] = keras_assets.vocabulary_text(layer)
        if space.concat is not None:
            _write_vars(handle, "concat", "tfd_concat", [])
        _write_vars(handle, "", space.name, [])
    with atomic_write(filepath, overwrite=overwrite) as temporary:
        with zipfile.ZipFile(temporary, "w") as archive:
            archive.writestr(METADATA, json.dumps(metadata))
            archive.writestr(CONFIG, config_text)
            archive.writestr(WEIGHTS, weights.getvalue(), compress_type=zipfile.ZIP_STORED)
            for name, text in assets.items():
                archive.writestr(name, text)


def _write_vars(handle, path, name, weights):
    from minikeras.backend import to_numpy

    variables = handle.require_group(f"{path}/vars" if path else "vars")
    variables.attrs["name"] = name
    for index, weight in enumerate(weights):
        keras_weights_h5._write(variables, str(index), to_numpy(weight.data))


# ------------------------------------------------------------------ reading
def _feature_to_minikeras(name, value, custom_objects, safe_mode, source):
    """A Keras-serialized Feature with its preprocessor in minikeras's form."""
    if not isinstance(value, dict) or value.get("class_name") != "Feature" or not isinstance(value.get("config"),
                                                                                               dict):
        raise ValueError(f"Malformed FeatureSpace config in {source}: feature {name!r} is not a serialized Feature "
                         f"({str(value)[:200]!r}).")
    config = dict(value["config"])
    preprocessor = config.get("preprocessor")
    if isinstance(preprocessor, dict) and preprocessor.get("class_name") == "TFDIdentity":
        preprocessor = {**preprocessor, "module": "keras.layers", "class_name": "Identity", "registered_name": None}
    config["preprocessor"] = keras_config.to_minikeras(preprocessor, custom_objects, safe_mode, source)
    return {"class_name": "Feature", "config": config}


def load_feature_space(archive, spec, custom_objects, safe_mode, source, max_bytes):
    """The FeatureSpace in an open ``.keras`` archive whose ``config.json`` is ``spec``."""
    from minikeras.layers.preprocessing.feature_space import FeatureSpace

    config = spec.get("config")
    if not isinstance(config, dict) or not isinstance(config.get("features"), dict):
        raise ValueError(f"Malformed FeatureSpace config in {source}: expected a 'features' dict.")
    build_config = spec.get("build_config") or {}
    if not isinstance(build_config, dict):
        raise ValueError(f"Malformed FeatureSpace build_config in {source}: expected a dict, received "
                         f"{str(build_config)[:200]!r}.")
    config = dict(config)
    # One budget for the whole load (_support/load_budget.py): the preprocessors' weights (a Normalization built on a huge
    # shape), what their configs' sizes make them hold (a crossing_dim, num_oov_indices), their vocabularies.
    weight_bytes = member_size(archive, WEIGHTS, source, weights_limit(max_bytes), "weights under max_bytes")
    with safe_mode_scope(safe_mode), load_budget.loading_budget(weight_bytes, source, max_bytes):
        config["features"] = {name: _feature_to_minikeras(name, value, custom_objects, safe_mode, source)
                              for name, value in config["features"].items()}
        space = FeatureSpace.from_config(config)
        space.build_from_config(build_config)
        weights = read_member(archive, WEIGHTS, source, weights_limit(max_bytes), "weights under max_bytes")
        with hdf5_links.open_contained(weights, source) as handle:
            keras_weights_h5.declared_bytes(handle, source, max_bytes)
            plan, budget = [], keras_assets.AssetBudget()
            for key, layer in dict(_containers(space))["preprocessors"].items():
                plan.extend(_plan_layer(handle, f"preprocessors/{key}", layer, source, max_bytes))
                _load_vocabulary(archive, keras_assets.member(f"preprocessors/{key}"), layer, source, budget)
            keras_weights_h5.assign(plan, source)
        space._is_adapted = True
        space.get_encoded_features()  # builds the encoders and the concatenation, as adapt() does
    space.built = space._sublayers_built = True
    return space


def _plan_layer(handle, path, layer, source, max_bytes):
    weights = keras_weights_h5.own_weights(layer)
    variables = keras_weights_h5._find_vars(handle, path, layer.name)
    where = f"'{path}/vars' (preprocessor '{layer.name}')"
    if variables is None:
        if weights:
            raise ValueError(f"No weights for preprocessor '{layer.name}' in {source}: the group {where} is missing.")
        return []
    datasets = keras_weights_h5._datasets(variables, source, path)
    if len(datasets) != len(weights):
        raise ValueError(f"Weight count mismatch for preprocessor '{layer.name}' ({where} in {source}): it has "
                         f"{len(weights)} weight(s) {[tuple(w.shape) for w in weights]}, the file has "
                         f"{len(datasets)} {[tuple(d.shape) for d in datasets]}.")
    for weight, dataset in zip(weights, datasets):
        keras_weights_h5.check_dataset(dataset, weight, where, source, max_bytes)
    return list(zip(weights, datasets))


def _load_vocabulary(archive, member, layer, source, budget):
    """A lookup layer's vocabulary from its asset, when its config had none (Keras's files); all of
    them share ``budget`` (keras_assets.AssetBudget)."""
    from minikeras.layers.preprocessing.index_lookup import IntegerLookup, StringLookup

    if not isinstance(layer, (IntegerLookup, StringLookup)) or _lookup_vocabulary(layer) is not None:
        return
    if member not in archive.namelist():
        return  # not adapted when saved
    layer.set_vocabulary(keras_assets.read_vocabulary(archive, member, layer, source, budget))
