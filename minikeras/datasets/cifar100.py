"""CIFAR-100 small color images, from the official ``cifar-100-python.tar.gz``.

The archive holds ``cifar-100-python/train`` (50,000 images) and
``cifar-100-python/test`` (10,000), each a pickled dict whose ``b"data"`` is
uint8 of shape (N, 3072), one image per row channel by channel, with
``b"fine_labels"`` (100 classes) and ``b"coarse_labels"`` (20 superclasses).
It is read straight from the archive, and the pickles with an unpickler
that allows only NumPy array reconstruction, so a tampered archive cannot
run code.

Example:
    >>> from minikeras.datasets import cifar100
    >>> (x_train, y_train), (x_test, y_test) = cifar100.load_data(label_mode="fine")
    >>> x_train.shape, y_train.shape
    ((50000, 32, 32, 3), (50000, 1))
"""
import tarfile
import zlib

import numpy

from minikeras.datasets import _files, _safe_pickle
from minikeras.datasets._errors import CorruptDatasetError

_FILE_NAME = "cifar-100-python.tar.gz"
_URL = "https://www.cs.toronto.edu/~kriz/cifar-100-python.tar.gz"
_SHA256 = "85cd44d02ba6437773c5bbd22e183051d648de2e7d6b014e1ef29b855ba677a7"
# Where Keras keeps its copy (its get_file names the archive after the target folder).
_LOCAL_COPIES = ("~/.keras/datasets/cifar-100-python.tar.gz", "~/.keras/datasets/cifar-100-python-target")
# The counts a complete archive holds; tests shrink them.
_SPLIT_SIZES = {"train": 50000, "test": 10000}
_CLASSES = {"fine": 100, "coarse": 20}
_FOLDER = "cifar-100-python"
_PIXELS = 32 * 32 * 3
# The real train member is 155 MB (50,000 images and their pickle): a member
# declaring more is refused before it is read (a small gzip can inflate to
# gigabytes).
_MAX_MEMBER_BYTES = 192 * 2**20


def load_data(label_mode="fine"):
    """Loads CIFAR-100, downloading it on first use.

    Args:
        label_mode: ``"fine"`` (100 classes) or ``"coarse"`` (20 superclasses).

    Returns:
        ``((x_train, y_train), (x_test, y_test))``: uint8 images, channels
        last, ``(50000, 32, 32, 3)`` and ``(10000, 32, 32, 3)``; int64 labels
        of shape ``(N, 1)``, as Keras returns them.

    Raises:
        ValueError: an unknown ``label_mode``.
        DatasetNotFoundError: no usable copy and no network; the message says
            where to put ``cifar-100-python.tar.gz``.
        CorruptDatasetError: the archive failed its checks.
    """
    if label_mode not in _CLASSES:
        raise ValueError(f"cifar100.load_data: label_mode must be 'fine' or 'coarse', received {label_mode!r}.")
    remote = _files.RemoteFile(dataset="CIFAR-100", name=_FILE_NAME, urls=(_URL,), checksum=("sha256", _SHA256))
    splits = _files.fetch(remote, read_archive, local_copies=_LOCAL_COPIES)
    return tuple((images, labels[label_mode].reshape(-1, 1)) for images, labels in splits)


def read_archive(path):
    """Reads and checks a complete archive.

    Returns:
        ``((x_train, {"fine": labels, "coarse": labels}), (x_test, {...}))``.

    Raises:
        CorruptDatasetError: truncated, missing a split, or malformed.
    """
    splits = {}
    try:
        with tarfile.open(path, mode="r|*") as archive:  # one pass over the gzip
            for member in archive:
                name = member.name[2:] if member.name.startswith("./") else member.name
                folder, _, split = name.partition("/")
                if member.isfile() and folder == _FOLDER and split in _SPLIT_SIZES:
                    if member.size > _MAX_MEMBER_BYTES:
                        raise CorruptDatasetError(f"{member.name} declares {member.size} bytes, more than "
                                                  f"a CIFAR-100 split can hold ({_MAX_MEMBER_BYTES})")
                    blob = archive.extractfile(member).read(_MAX_MEMBER_BYTES)
                    splits[split] = _read_split(blob, split)
    except (tarfile.TarError, OSError, EOFError, zlib.error) as error:
        raise CorruptDatasetError(
            f"{path}: is not a complete tar archive ({type(error).__name__}: {error})") from error
    except CorruptDatasetError as error:
        raise CorruptDatasetError(f"{path}: {error}") from None
    missing = sorted(set(_SPLIT_SIZES) - set(splits))
    if missing:
        raise CorruptDatasetError(f"{path}: has no {', '.join(f'{_FOLDER}/{split}' for split in missing)}")
    result = []
    for split in ("train", "test"):
        data, labels = splits[split]
        if len(data) != _SPLIT_SIZES[split]:
            raise CorruptDatasetError(f"{path}: expected {_SPLIT_SIZES[split]} {split} images, found {len(data)}")
        images = numpy.ascontiguousarray(data.reshape(-1, 3, 32, 32).transpose(0, 2, 3, 1))
        result.append((images, labels))
    return tuple(result)


def _read_split(blob, split):
    try:
        batch = _safe_pickle.loads(blob, encoding="bytes")
    except Exception as error:  # unpickling bad bytes can raise almost anything
        raise CorruptDatasetError(f"{split} is not a readable batch ({type(error).__name__}: {error})") from error
    if not isinstance(batch, dict) or b"data" not in batch:
        raise CorruptDatasetError(f"{split}: expected a dict with b'data', found {type(batch).__name__}")
    data = batch[b"data"]
    if not (isinstance(data, numpy.ndarray) and data.dtype == numpy.uint8 and data.ndim == 2
            and data.shape[1] == _PIXELS):
        raise CorruptDatasetError(f"{split}: expected b'data' to be uint8 of shape (N, {_PIXELS})")
    labels = {}
    for mode, classes in _CLASSES.items():
        key = f"{mode}_labels".encode()
        if key not in batch:
            raise CorruptDatasetError(f"{split} has no {key!r} entry")
        try:
            values = numpy.asarray(batch[key], dtype=numpy.int64).reshape(-1)
        except (TypeError, ValueError) as error:
            raise CorruptDatasetError(f"{split}: {key!r} is not a list of integers") from error
        if len(values) != len(data):
            raise CorruptDatasetError(f"{split}: {len(data)} images but {len(values)} {mode} labels")
        if values.size and (values.min() < 0 or values.max() >= classes):
            raise CorruptDatasetError(f"{split}: {mode} labels must be 0-{classes - 1}, "
                                      f"found {values.min()}-{values.max()}")
        labels[mode] = values
    return data, labels
