"""Crafted files for the loading holes of issue 36, each small on disk and
made in well under a second: configs naming huge sizes (OOV counts,
max_tokens, a crossing_dim, hash bins, a sequence length), vocabulary
assets larger than their config says, a weights file of many small gzip
bombs, HDF5 links out of the file, integer dtype policies over float
weights.

Sizes are chosen so that an unfixed loader allocates a few hundred MB
(enough for rss_probe.py to see, not enough to take the machine down),
while the fixed one refuses the file before allocating anything.
"""
import io
import json
import os
import zipfile

import h5py
import numpy

import minikeras as mk
from minikeras import layers

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "saving", "fixtures", "keras_assets")
ASSETS = {"strings": "assets/layers/string_lookup/vocabulary.txt",
          "strings_masked": "assets/layers/string_lookup_1/vocabulary.txt",
          "integers": "assets/layers/integer_lookup/vocabulary.txt"}


def fixture_members(name):
    """The members of a Keras-made fixture of tests/saving/fixtures/keras_assets."""
    with zipfile.ZipFile(os.path.join(FIXTURES, f"{name}.keras")) as archive:
        return {member: archive.read(member) for member in archive.namelist()}


def write_zip(path, members, compression=zipfile.ZIP_DEFLATED):
    with zipfile.ZipFile(path, "w", compression=compression) as archive:
        for member, data in members.items():
            archive.writestr(member, data)
    return str(path)


def _layer_specs(spec):
    return spec["config"]["layers"]


def with_layer_config(path, fixture, layer_name, **config):
    """The fixture with ``config`` merged into the config of its layer ``layer_name``."""
    members = fixture_members(fixture)
    spec = json.loads(members["config.json"])
    for layer in _layer_specs(spec):
        if layer["config"].get("name") == layer_name:
            layer["config"].update(config)
    members["config.json"] = json.dumps(spec)
    return write_zip(path, members)


def saved_model(path, model):
    model.save(path)
    return str(path)


def with_config_edit(path, edit):
    """The ``.keras`` at ``path`` rewritten with ``edit(spec)`` applied to its config (its CRC dropped)."""
    with zipfile.ZipFile(path) as archive:
        members = {member: archive.read(member) for member in archive.namelist()}
    spec = json.loads(members["config.json"])
    edit(spec)
    members["config.json"] = json.dumps(spec)
    members.pop("metadata.json", None)
    return write_zip(path, members)


def _set_everywhere(value, key, new):
    if isinstance(value, dict):
        for name, item in value.items():
            if name == key:
                value[name] = new
            else:
                _set_everywhere(item, key, new)
    elif isinstance(value, list):
        for item in value:
            _set_everywhere(item, key, new)


# ------------------------------------------------------------------ item 1: sizes in configs
def huge_oov_file(path, num_oov_indices):
    """A StringLookup whose config says ``num_oov_indices`` (Keras-made fixture otherwise)."""
    return with_layer_config(path, "lookups", "strings", num_oov_indices=num_oov_indices)


def huge_padded_multi_hot_file(path, max_tokens):
    """A multi-hot StringLookup, its vocabulary inline, padded to ``max_tokens``."""
    inputs = layers.Input(shape=(2,), dtype="string")
    lookup = layers.StringLookup(vocabulary=["a", "b"], output_mode="multi_hot", max_tokens=8,
                                 pad_to_max_tokens=True, name="bag")
    saved_model(path, mk.Model(inputs, lookup(inputs)))
    return with_config_edit(path, lambda spec: _set_everywhere(spec, "max_tokens", max_tokens))


def huge_crossing_file(path, crossing_dim):
    """A FeatureSpace (Keras's file layout) crossing two columns into ``crossing_dim`` bins."""
    from minikeras.layers.preprocessing.feature_space import FeatureSpace

    space = FeatureSpace({"a": "integer_categorical", "b": "string_categorical"}, crosses=[("a", "b")],
                         crossing_dim=4, output_mode="concat")
    space.adapt({"a": numpy.array([1, 2, 3]), "b": numpy.array(["x", "y", "z"])})
    space.save(path)
    return with_config_edit(path, lambda spec: _set_everywhere(spec, "crossing_dim", crossing_dim))


def huge_hash_bins_file(path, num_bins):
    """A multi-hot Hashing layer of ``num_bins`` bins."""
    inputs = layers.Input(shape=(2,), dtype="string")
    saved_model(path, mk.Model(inputs, layers.Hashing(num_bins=4, output_mode="multi_hot", name="hash")(inputs)))
    return with_config_edit(path, lambda spec: _set_everywhere(spec, "num_bins", num_bins))


def huge_sequence_file(path, length):
    """A TextVectorization whose ids are padded to ``output_sequence_length=length``."""
    inputs = layers.Input(shape=(1,), dtype="string")
    vectorize = layers.TextVectorization(vocabulary=["a", "b"], output_sequence_length=4, name="vectorize")
    saved_model(path, mk.Model(inputs, vectorize(inputs)))
    return with_config_edit(path, lambda spec: _set_everywhere(spec, "output_sequence_length", length))


def huge_embedding_file(path, input_dim):
    """An Embedding of ``input_dim`` rows (its weights, of the original size, do not back it)."""
    inputs = layers.Input(shape=(3,), dtype="int64")
    saved_model(path, mk.Model(inputs, layers.Embedding(10, 4, name="embed")(inputs)))
    return with_config_edit(path, lambda spec: _set_everywhere(spec, "input_dim", input_dim))


def huge_repeat_vector_file(path, n):
    """A RepeatVector of ``n`` copies (no weight backs it: only the probe batch would hold them)."""
    saved_model(path, mk.Sequential([layers.Input((4,)), layers.Dense(4, name="dense"),
                                     layers.RepeatVector(3, name="repeat")]))
    return with_config_edit(path, lambda spec: _set_everywhere(spec, "n", n))


def huge_op_node_file(path, repeats):
    """A functional graph whose ``ops.repeat(x, repeats, axis=1)`` node repeats ``repeats`` times."""
    inputs = layers.Input((4,))
    saved_model(path, mk.Model(inputs, mk.ops.repeat(layers.Dense(4, name="dense")(inputs), 3, axis=1)))

    def edit(spec):
        for layer in spec["config"]["layers"]:
            if layer["class_name"] == "SymbolicOperation":
                layer["config"]["arguments"]["args"][1] = repeats

    return with_config_edit(path, edit)


# ------------------------------------------------------------------ item 4: vocabulary assets
def hex_vocabulary(count, start=0):
    """``count`` distinct short tokens, one a line (what ``vocabulary.txt`` holds), as bytes."""
    return "\n".join(f"{index:x}" for index in range(start, start + count)).encode()


def large_assets_file(path, tokens_per_asset, declared=None):
    """The ``lookups`` fixture (3 lookups) whose every asset holds ``tokens_per_asset`` distinct tokens
    (integers for the IntegerLookup) and whose configs declare ``vocabulary_size=declared``."""
    members = fixture_members("lookups")
    spec = json.loads(members["config.json"])
    for layer in _layer_specs(spec):
        if "vocabulary_size" in layer["config"]:
            layer["config"]["vocabulary_size"] = declared
    members["config.json"] = json.dumps(spec)
    members.pop("metadata.json")
    specials = {"strings": b"[UNK]\n", "strings_masked": b"[MASK]\n[UNK]\n[UNK]\n", "integers": b"-1\n"}
    for offset, (name, member) in enumerate(ASSETS.items()):
        if name == "integers":
            tokens = "\n".join(str(index) for index in range(tokens_per_asset)).encode()
        else:
            tokens = hex_vocabulary(tokens_per_asset, start=offset * tokens_per_asset)
        members[member] = specials[name] + tokens
    return write_zip(path, members)


# ------------------------------------------------------------------ item 5: many small gzip bombs
def many_gzip_datasets_file(path, count, values=2**18):
    """A ``.weights.h5`` of ``count`` gzip datasets of ``values`` float32 zeros each (1 MiB by
    default): each inflates within the per-dataset allowance, all of them together do not. One chunk is
    compressed once; every other dataset gets its bytes (HDF5's write_direct_chunk)."""
    with h5py.File(path, "w") as handle:
        group = handle.create_group("layers/dense/vars")
        first = group.create_dataset("0", shape=(values,), dtype="float32", chunks=(values,), compression="gzip")
        first[...] = 0.0
        mask, raw = first.id.read_direct_chunk((0,))
        for index in range(1, count):
            dataset = group.create_dataset(str(index), shape=(values,), dtype="float32", chunks=(values,),
                                           compression="gzip")
            dataset.id.write_direct_chunk((0,), raw, mask)
    return str(path)


# ------------------------------------------------------------------ item 2: links out of the file
def small_model():
    model = mk.Sequential([layers.Input((4,)), layers.Dense(3, name="d")])
    return model


def outside_file(folder, values=None):
    """An HDF5 file standing for another file on disk: ``/data`` holds 42s of the kernel's shape."""
    path = os.path.join(folder, "outside.h5")
    with h5py.File(path, "w") as handle:
        handle["data"] = numpy.full((4, 3), 42.0, "float32") if values is None else values
        handle["group/0"] = numpy.full((4, 3), 42.0, "float32")
        handle["group/1"] = numpy.full((3,), 42.0, "float32")
    return path


def linked_weights(path, folder, kind):
    """A ``.weights.h5`` of small_model() whose kernel dataset is replaced by ``kind``: "external"
    (a link to outside_file's /data), "external_group" (the whole vars group linked out), "virtual" (a
    virtual dataset mapping outside_file's /data), "external_storage" (raw bytes in another file),
    "dangling_soft" (a soft link to nothing) or "inner_soft" (a soft link to a copy inside the file)."""
    model = small_model()
    model.save_weights(path)
    outside = outside_file(folder)
    with h5py.File(path, "r+") as handle:
        group = handle["layers/dense/vars"]
        if kind == "external_group":
            del handle["layers/dense/vars"]
            handle["layers/dense/vars"] = h5py.ExternalLink(outside, "/group")
            return model
        del group["0"]
        if kind == "external":
            group["0"] = h5py.ExternalLink(outside, "/data")
        elif kind == "virtual":
            layout = h5py.VirtualLayout(shape=(4, 3), dtype="float32")
            layout[...] = h5py.VirtualSource(outside, "data", shape=(4, 3))
            group.create_virtual_dataset("0", layout)
        elif kind == "external_storage":
            raw = os.path.join(folder, "raw.bin")
            numpy.full((4, 3), 42.0, "float32").tofile(raw)
            group.create_dataset("0", shape=(4, 3), dtype="float32", external=[(raw, 0, 48)])
        elif kind == "dangling_soft":
            group["0"] = h5py.SoftLink("/nowhere/kernel")
        elif kind == "inner_soft":
            handle["copies/kernel"] = numpy.full((4, 3), 7.0, "float32")
            group["0"] = h5py.SoftLink("/copies/kernel")
        else:
            raise ValueError(kind)
    return model


def keras_with_linked_weights(path, folder):
    """A ``.keras`` of small_model() whose weights member's kernel is an external link."""
    model = small_model()
    model.save(path)
    outside = outside_file(folder)
    with zipfile.ZipFile(path) as archive:
        members = {member: archive.read(member) for member in archive.namelist()}
    buffer = io.BytesIO(members["model.weights.h5"])
    with h5py.File(buffer, "r+") as handle:
        del handle["layers/dense/vars/0"]
        handle["layers/dense/vars/0"] = h5py.ExternalLink(outside, "/data")
    members["model.weights.h5"] = buffer.getvalue()
    return write_zip(path, members, compression=zipfile.ZIP_STORED)


def legacy_h5_with_link(path, folder):
    """A tf.keras-layout ``.h5`` model whose kernel dataset is an external link."""
    model = small_model()
    model.save(path)
    outside = outside_file(folder)
    with h5py.File(path, "r+") as handle:
        kernels = []
        handle["model_weights"].visititems(
            lambda name, item: kernels.append(name) if isinstance(item, h5py.Dataset) and "kernel" in name else None)
        del handle["model_weights"][kernels[0]]
        handle["model_weights"][kernels[0]] = h5py.ExternalLink(outside, "/data")
    return str(path)


# ------------------------------------------------------------------ item 11: integer dtype policies
def integer_policy_file(path, policy, suffix=".keras"):
    """small_model() saved with its Dense's dtype policy turned into ``policy`` (e.g. "int8")."""
    model = small_model()
    if suffix == ".keras":
        model.save(path)

        def edit(spec):
            for layer in _layer_specs(spec):
                if layer["class_name"] == "Dense":
                    layer["config"]["dtype"] = {"module": "keras", "class_name": "DTypePolicy",
                                                "config": {"name": policy}, "registered_name": None}

        with_config_edit(path, edit)
        return model
    model.save(path)
    with h5py.File(path, "r+") as handle:
        spec = json.loads(handle.attrs["model_config"])
        for layer in _layer_specs(spec):
            if layer["class_name"] == "Dense":
                layer["config"]["dtype"] = policy
        handle.attrs["model_config"] = json.dumps(spec)
        for key in [key for key in handle.attrs if key.startswith("minikeras_") and "crc" in key]:
            del handle.attrs[key]
    return model
