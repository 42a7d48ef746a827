"""Decompression bombs for the memory tests (issue 27), generated here in
well under a second each and small on disk (< 1 MiB).

Each starts from a legitimate file minikeras wrote and swaps in data that
inflates: a ``.keras`` zip whose weights member is hundreds of MiB of
deflated zeros, and model files whose config declares a layer as large as
a filtered (gzip, lzf, szip) or chunked dataset inflates to, so that shapes
match and only the inflation gives the bomb away.

The inflated bytes are never produced here: one compressed chunk is made
once and its bytes repeated (HDF5's ``write_direct_chunk``; for the zip, a
deflate block ended by a full flush, which resets the dictionary, so the
same input gives the same bytes again).
"""
import io
import json
import struct
import zipfile
import zlib

import h5py
import numpy

import minikeras as mk
from minikeras import layers

ZIP_INFLATED_BYTES = 384 * 2**20  # what the zip bomb's weights member inflates to
HUGE_UNITS = 2**25  # Dense(HUGE_UNITS) on 4 inputs: a 512 MiB kernel and a 128 MiB bias
LZF_UNITS = 2**23  # lzf inflates ~90:1 at best: a quarter of the size keeps the file under 2 MiB
_CHUNK_VALUES = 2**18  # 1 MiB of float32 per chunk


def _small_model():
    model = mk.Sequential([layers.Dense(3, input_shape=(4,), name="hidden")])
    model.compile(optimizer="sgd", loss="mse")
    return model


# ------------------------------------------------------------------ zip bombs
def _raw_deflate(data):
    compressor = zlib.compressobj(9, zlib.DEFLATED, -15)
    return compressor.compress(data) + compressor.flush(zlib.Z_FULL_FLUSH)


def _zero_blocks(count, crc=0, block_bytes=2**24):
    """Deflate bytes for ``count * block_bytes`` zeros (not held in memory) and the CRC-32
    continued from ``crc`` over them."""
    zeros = bytes(block_bytes)
    block = _raw_deflate(zeros)
    for _ in range(count):
        crc = zlib.crc32(zeros, crc)
    return block * count, crc


def _write_zip(path, members):
    """A zip of deflated members ``(name, raw deflate bytes, crc32, inflated size)``, written by hand
    (zipfile compresses what it is given; these bytes are compressed already)."""
    local, central = io.BytesIO(), io.BytesIO()
    for name, data, crc, size in members:
        encoded = name.encode()
        offset = local.tell()
        local.write(struct.pack("<4s5H3L2H", b"PK\x03\x04", 20, 0, 8, 0, 0x21, crc, len(data), size, len(encoded), 0))
        local.write(encoded + data)
        central.write(struct.pack("<4s6H3L5H2L", b"PK\x01\x02", 20, 20, 0, 8, 0, 0x21, crc, len(data), size,
                                  len(encoded), 0, 0, 0, 0, 0, offset))
        central.write(encoded)
    directory = central.getvalue()
    end = struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, len(members), len(members), len(directory), local.tell(), 0)
    with open(path, "wb") as handle:
        handle.write(local.getvalue() + directory + end)


def _deflated(data):
    compressor = zlib.compressobj(9, zlib.DEFLATED, -15)
    return compressor.compress(data) + compressor.flush(), zlib.crc32(data), len(data)


def _keras_members(path):
    with zipfile.ZipFile(path) as archive:
        return {name: archive.read(name) for name in archive.namelist()}


def keras_zip_bomb(path, inflated=ZIP_INFLATED_BYTES):
    """A ``.keras`` whose ``model.weights.h5`` is the real weights file followed by
    ``inflated`` bytes of zeros (HDF5 ignores bytes past its end): under 1 MiB on disk."""
    _small_model().save(path)
    members = _keras_members(path)
    weights = members["model.weights.h5"]
    zeros, crc = _zero_blocks(inflated // 2**24, zlib.crc32(weights))
    body = _raw_deflate(weights) + zeros + b"\x03\x00"  # an empty final block ends the stream
    _write_zip(path, [("metadata.json",) + _deflated(members["metadata.json"]),
                      ("config.json",) + _deflated(members["config.json"]),
                      ("model.weights.h5", body, crc, len(weights) + inflated)])


# ------------------------------------------------------------- dataset bombs
def _inflating_dataset(group, name, shape, compression):
    """A float32 dataset of ``shape`` (its last axis chunked in 1 MiB pieces) whose every chunk
    holds the compressed bytes of one chunk of zeros."""
    chunk = tuple(shape[:-1]) + (_CHUNK_VALUES // int(numpy.prod(shape[:-1], dtype=int)),)
    options = {"szip": {"compression_opts": ("nn", 16)}}.get(compression, {})
    dataset = group.create_dataset(name, shape=shape, dtype="float32", chunks=chunk, compression=compression,
                                   **options)
    dataset[tuple(slice(0, size) for size in chunk)] = 0.0  # HDF5 compresses one chunk ...
    mask, raw = dataset.id.read_direct_chunk((0,) * len(shape))
    for start in range(chunk[-1], shape[-1], chunk[-1]):  # ... whose bytes every other chunk repeats
        dataset.id.write_direct_chunk((0,) * (len(shape) - 1) + (start,), raw, mask)
    return dataset


def _huge_config(config, units):
    for spec in config["config"]["layers"]:
        if spec["class_name"] == "Dense":
            spec["config"]["units"] = units
    return config


def _fill_huge_weights(group, compression, units):
    """Replace a ``vars``/layer group's kernel and bias by inflating datasets of the huge layer's shapes."""
    kernel, bias = list(group.keys())[:2] if "0" in group else (None, None)
    names = (kernel, bias) if kernel is not None else ("hidden/kernel", "hidden/bias")
    for name in names:
        del group[name]
    _inflating_dataset(group, names[0], (4, units), compression)
    _inflating_dataset(group, names[1], (units,), compression)


def h5_dataset_bomb(path, compression="gzip", units=HUGE_UNITS):
    """A legacy ``.h5`` model: Dense(units) in the config, its weights (640 MiB
    at HUGE_UNITS) stored as ``compression``-filtered zeros."""
    _small_model().save(path)
    with h5py.File(path, "r+") as handle:
        config = json.loads(handle.attrs["model_config"])
        handle.attrs["model_config"] = json.dumps(_huge_config(config, units))
        for key in [key for key in handle.attrs if key.startswith("minikeras_") and "crc" in key]:
            del handle.attrs[key]
        if "optimizer_weights" in handle:
            del handle["optimizer_weights"]
        _fill_huge_weights(handle["model_weights/hidden"], compression, units)


def keras_nested_bomb(path, compression="gzip", units=HUGE_UNITS):
    """A ``.keras`` (its members deflated) whose config declares Dense(HUGE_UNITS) and whose
    weights file holds that layer's weights as ``compression``-filtered zeros: compression twice."""
    _small_model().save(path)
    members = _keras_members(path)
    config = _huge_config(json.loads(members["config.json"]), units)
    config["compile_config"] = None
    weights = io.BytesIO(members["model.weights.h5"])
    with h5py.File(weights, "r+") as handle:
        if "optimizer" in handle:
            del handle["optimizer"]
        _fill_huge_weights(handle["layers/dense/vars"], compression, units)
    _write_zip(path, [("config.json",) + _deflated(json.dumps(config).encode()),
                      ("model.weights.h5",) + _deflated(weights.getvalue())])


def chunked_huge_weights(path):
    """A ``.weights.h5`` for the small model whose kernel dataset is chunked,
    unfiltered and declares 2**40 values: almost nothing of it is stored."""
    model = _small_model()
    model.save_weights(path)
    with h5py.File(path, "r+") as handle:
        group = handle["layers/dense/vars"]
        del group["0"]
        group.create_dataset("0", shape=(4, 2**38), dtype="float32", chunks=(4, 2**16))
    return model
