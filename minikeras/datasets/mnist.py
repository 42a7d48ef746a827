"""MNIST handwritten digits, from Keras's ``mnist.npz``.

Example:
    >>> from minikeras.datasets import mnist
    >>> (x_train, y_train), (x_test, y_test) = mnist.load_data()
    >>> x_train.shape, y_train.shape, x_test.shape, x_train.dtype
    ((60000, 28, 28), (60000,), (10000, 28, 28), dtype('uint8'))
"""
import zipfile
import zlib

import numpy as np

from minikeras.datasets import _files
from minikeras.datasets._errors import CorruptDatasetError

_URL = "https://storage.googleapis.com/tensorflow/tf-keras-datasets/mnist.npz"
# Keras's published checksum of mnist.npz.
_SHA256 = "731c5ac602752760c8e48fbffcf8c3b850d9dc2a2aedcf2cc48468fc17b673d1"
# Other places a complete copy may already be: Keras's own cache.
_LOCAL_COPIES = ("~/.keras/datasets/mnist.npz",)
# The counts a complete file holds; tests shrink them.
_SPLIT_SIZES = {"train": 60000, "test": 10000}
_KEYS = ("x_train", "y_train", "x_test", "y_test")


def load_data(path="mnist.npz"):
    """Loads MNIST, downloading it on first use.

    The file is looked for in the cache directory, then in Keras's cache, then
    downloaded; see `minikeras.datasets` for the details and the checks made.

    Args:
        path: File name of the archive inside the cache directory
            (``~/.minikeras/datasets``), or an absolute path.

    Returns:
        ``((x_train, y_train), (x_test, y_test))``: uint8 images of shape
        ``(60000, 28, 28)`` and ``(10000, 28, 28)``, uint8 labels 0-9 of shape
        ``(60000,)`` and ``(10000,)``.

    Raises:
        DatasetNotFoundError: No usable copy and no network; the message says
            where to put ``mnist.npz``.
        CorruptDatasetError: The downloaded file failed its checks.
    """
    remote = _files.RemoteFile(
        dataset="MNIST", name=str(path), urls=(_URL,), checksum=("sha256", _SHA256))
    arrays = _files.fetch(remote, read_npz, local_copies=_LOCAL_COPIES)
    return (arrays["x_train"], arrays["y_train"]), (arrays["x_test"], arrays["y_test"])


# An .npy header is at most a few hundred bytes.
_NPY_HEADER_SLACK = 4096


def read_npz(path):
    """Reads and checks a complete ``mnist.npz``.

    Args:
        path: The file.

    Returns:
        Dict of the four arrays ``x_train, y_train, x_test, y_test``.

    Raises:
        CorruptDatasetError: The file is not a complete zip of the four uint8
            arrays of the expected shapes, or a label is above 9.
    """
    try:
        # Opened here, not by np.load, which leaks the handle when the zip is bad.
        with open(path, "rb") as stream:
            archive = np.load(stream, allow_pickle=False)
            if not hasattr(archive, "files"):  # a lone .npy array
                raise CorruptDatasetError(f"{path}: is a single array, not an .npz archive")
            missing = [key for key in _KEYS if key not in archive.files]
            if missing:
                raise CorruptDatasetError(f"{path}: has no array named {', '.join(missing)}")
            _check_declared_sizes(path, archive)
            arrays = {key: archive[key] for key in _KEYS}
    except (zipfile.BadZipFile, ValueError, OSError, EOFError, zlib.error) as error:
        raise CorruptDatasetError(
            f"{path}: is not a complete .npz archive ({type(error).__name__}: {error})") from error
    for split, count in _SPLIT_SIZES.items():
        images, labels = arrays[f"x_{split}"], arrays[f"y_{split}"]
        _check(path, f"x_{split}", images, (count, 28, 28))
        _check(path, f"y_{split}", labels, (count,))
        if labels.size and labels.max() > 9:
            raise CorruptDatasetError(f"{path}: y_{split} holds label {labels.max()}, above 9")
    return arrays


def _check_declared_sizes(path, archive):
    """Refuse a member whose declared size exceeds what its array could
    need, before reading it: a small zip can inflate to gigabytes, and
    zipfile never reads past the declared size. Up to 8 bytes a value pass
    here, so that a wrong dtype gets its own precise error afterwards."""
    for key in _KEYS:
        split = key.split("_", 1)[1]
        values = _SPLIT_SIZES[split] * (28 * 28 if key.startswith("x") else 1)
        needed = 8 * values + _NPY_HEADER_SLACK
        declared = archive.zip.getinfo(f"{key}.npy").file_size
        if declared > needed:
            raise CorruptDatasetError(
                f"{path}: {key}.npy declares {declared} bytes, more than its array needs ({needed})")


def _check(path, key, array, shape):
    """Raises `CorruptDatasetError` unless ``array`` is uint8 of ``shape``."""
    if array.dtype != np.uint8 or array.shape != shape:
        raise CorruptDatasetError(
            f"{path}: expected {key} to be uint8 of shape {shape}, "
            f"found {array.dtype} of shape {array.shape}")
