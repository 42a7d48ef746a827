"""What a compressed file may inflate to, and what a model needs to be read.

A file is small on disk and its reader allocates what it declares: a zip
member inflates (deflate reaches ~1,030:1 on zeros), an HDF5 dataset
passes through its filters (gzip ~1,030:1, lzf ~90:1, szip) or keeps
unwritten chunks as a fill value. Two bounds keep a small file from
taking a machine down, both checked from metadata before anything inflates:

- a *credible ratio*: real weights are noise to a compressor (trained
  float32 shrinks ~1.1:1; zero biases shrink more but are small), so a file
  whose data claims more than :data:`MAX_CREDIBLE_RATIO` times its
  compressed bytes, beyond a 1 MiB allowance for zero-filled biases and
  metadata, is crafted. The ratio sits far below what deflate and lzf reach,
  so it fires on their bombs (a cap above ~1,030:1 would never fire);
- the *bytes the model needs*: once the model is rebuilt (or given, for
  ``load_weights``), nothing larger than its weights, a full optimizer state
  and HDF5's metadata is read, whatever the file claims.

Both are lifted by ``max_bytes=None`` (a trusted file).
"""
import numpy

from minikeras._support.load_budget import FileLoadError

# Real weights compress ~1.1:1 (a pruned, 95%-sparse model ~15:1); deflate
# and lzf bombs reach ~1,030:1 and ~90:1.
MAX_CREDIBLE_RATIO = 32
# Zero-filled biases, fill values and HDF5 metadata may shrink more than real
# weights do; this much inflation is allowed on top of the ratio.
INFLATION_ALLOWANCE_BYTES = 2**20
# Bytes per value a file may use for a weight (float64 at most) and optimizer
# slots per weight (Adam keeps 2, AdamW with amsgrad 3; one to spare).
_BYTES_PER_VALUE = 8
_OPTIMIZER_SLOTS = 4
# HDF5's own metadata beside the datasets (headers, chunk indexes, names).
HDF5_OVERHEAD_BYTES = 64 * 2**20


def check_inflation(declared, stored, what, source, max_bytes):
    """Refuse ``declared`` bytes coming from ``stored`` compressed bytes beyond a credible ratio.

    Args:
        declared: what the data inflates to, as its metadata says.
        stored: its compressed size in the file.
        what: how to name the data in messages.
        source: the file, for messages.
        max_bytes: the caller's limit; None trusts the file (no check).

    Raises:
        FileLoadError: naming the file, both sizes and how to trust the file.
    """
    if max_bytes is None or declared <= MAX_CREDIBLE_RATIO * stored + INFLATION_ALLOWANCE_BYTES:
        return
    raise FileLoadError(
        f"{source}: {what} declares {declared} bytes from {stored} compressed bytes ({declared / max(stored, 1):.0f}:1),"
        f" more than real weights compress (at most {MAX_CREDIBLE_RATIO}:1): a decompression bomb? Refusing to "
        "inflate it. Pass max_bytes=None if the file is trusted.")


def check_datasets_inflation(datasets, source, max_bytes):
    """:func:`check_inflation` over the filtered h5py ``datasets`` together (each passed alone:
    many small inflating datasets must not add up to a bomb)."""
    declared = stored = 0
    for dataset in datasets:
        if dataset.id.get_create_plist().get_nfilters():
            declared += dataset.dtype.itemsize * int(numpy.prod(dataset.shape, dtype=object))
            stored += dataset.id.get_storage_size()
    check_inflation(declared, stored, f"the sum of its {len(datasets)} compressed datasets", source, max_bytes)


def model_needed_bytes(model):
    """The most a file of ``model``'s weights and optimizer state may hold: every
    weight at 8 bytes a value, a few optimizer slots each, plus HDF5's metadata."""
    values = sum(int(numpy.prod(weight.shape, dtype=object)) for weight in model.weights)
    return values * _BYTES_PER_VALUE * (1 + _OPTIMIZER_SLOTS) + HDF5_OVERHEAD_BYTES
