"""CIFAR-10 small color images, from the official ``cifar-10-python.tar.gz``.

The archive holds the folder ``cifar-10-batches-py/`` with ``data_batch_1`` to
``data_batch_5`` (training) and ``test_batch``, each a pickled dict whose
``b"data"`` is a uint8 array of shape (N, 3072), every row one image stored
channel by channel (1024 red, 1024 green, 1024 blue values, each row-major),
and whose ``b"labels"`` is a list of N integers 0-9. It is read straight from
the archive, without extracting it.

The batches are unpickled with an unpickler that accepts only what those
files need (NumPy array reconstruction), so a tampered archive cannot run code.

Labels: 0 airplane, 1 automobile, 2 bird, 3 cat, 4 deer, 5 dog, 6 frog,
7 horse, 8 ship, 9 truck.

Example:
    >>> from minikeras.datasets import cifar10
    >>> (x_train, y_train), (x_test, y_test) = cifar10.load_data()
    >>> x_train.shape, y_train.shape, x_test.shape, x_train.dtype
    ((50000, 32, 32, 3), (50000, 1), (10000, 32, 32, 3), dtype('uint8'))
"""
import importlib
import io
import pickle
import tarfile
import zlib

import numpy as np

from minikeras.datasets import _files
from minikeras.datasets._errors import CorruptDatasetError

_FILE_NAME = "cifar-10-python.tar.gz"
_URL = "https://www.cs.toronto.edu/~kriz/cifar-10-python.tar.gz"
# The MD5 checksum published on the CIFAR-10 page.
_MD5 = "c58f30108f718f92721af3b95e74349a"
# Other places a complete copy may already be: Keras's own cache.
_LOCAL_COPIES = ("~/.keras/datasets/cifar-10-batches-py.tar.gz",)
# The counts a complete archive holds; tests shrink them.
_SPLIT_SIZES = {"train": 50000, "test": 10000}
_FOLDER = "cifar-10-batches-py"
_TRAIN_BATCHES = tuple(f"data_batch_{number}" for number in range(1, 6))
_TEST_BATCH = "test_batch"
_PIXELS = 32 * 32 * 3
# A real batch is 31 MB (10000 images and the pickle around them): a member
# declaring more is refused before it is read (a small gzip can inflate to
# gigabytes).
_MAX_MEMBER_BYTES = 64 * 2**20


def load_data():
    """Loads CIFAR-10, downloading it on first use.

    The archive is looked for in the cache directory, then in Keras's cache,
    then downloaded; see `minikeras.datasets` for the details and the checks.

    Returns:
        ``((x_train, y_train), (x_test, y_test))``: uint8 images, channels
        last, of shape ``(50000, 32, 32, 3)`` and ``(10000, 32, 32, 3)``;
        uint8 labels 0-9 of shape ``(50000, 1)`` and ``(10000, 1)``, as Keras
        returns them.

    Raises:
        DatasetNotFoundError: No usable copy and no network; the message says
            where to put ``cifar-10-python.tar.gz``.
        CorruptDatasetError: The downloaded archive failed its checks.
    """
    remote = _files.RemoteFile(
        dataset="CIFAR-10", name=_FILE_NAME, urls=(_URL,), checksum=("md5", _MD5))
    return _files.fetch(remote, read_archive, local_copies=_LOCAL_COPIES)


def read_archive(path):
    """Reads and checks a complete ``cifar-10-python.tar.gz``.

    Args:
        path: The archive (gzipped or plain tar).

    Returns:
        ``((x_train, y_train), (x_test, y_test))`` as `load_data` returns them.

    Raises:
        CorruptDatasetError: The archive is truncated or corrupt, lacks a
            batch, or a batch is malformed or of the wrong size.
    """
    wanted = set(_TRAIN_BATCHES) | {_TEST_BATCH}
    batches = {}
    try:
        # Stream mode reads the gzip once, front to back: random access into a
        # .tar.gz would decompress it again for every member.
        with tarfile.open(path, mode="r|*") as archive:
            for member in archive:
                member_path = member.name[2:] if member.name.startswith("./") else member.name
                folder, _, name = member_path.partition("/")
                if member.isfile() and folder == _FOLDER and name in wanted:
                    if member.size > _MAX_MEMBER_BYTES:
                        raise CorruptDatasetError(
                            f"{member.name} declares {member.size} bytes, more than a CIFAR-10 batch "
                            f"can hold ({_MAX_MEMBER_BYTES})")
                    batches[name] = _read_batch(archive.extractfile(member).read(_MAX_MEMBER_BYTES), name)
    except (tarfile.TarError, OSError, EOFError, zlib.error) as error:
        raise CorruptDatasetError(
            f"{path}: is not a complete tar archive ({type(error).__name__}: {error})") from error
    except CorruptDatasetError as error:
        raise CorruptDatasetError(f"{path}: {error}") from None
    missing = sorted(wanted - set(batches))
    if missing:
        raise CorruptDatasetError(
            f"{path}: has no {', '.join(f'{_FOLDER}/{name}' for name in missing)}")
    splits = []
    for split, names in (("train", _TRAIN_BATCHES), ("test", (_TEST_BATCH,))):
        data = np.concatenate([batches[name][0] for name in names])
        labels = np.concatenate([batches[name][1] for name in names])
        if len(data) != _SPLIT_SIZES[split]:
            raise CorruptDatasetError(
                f"{path}: expected {_SPLIT_SIZES[split]} {split} images, found {len(data)}")
        images = np.ascontiguousarray(data.reshape(-1, 3, 32, 32).transpose(0, 2, 3, 1))
        splits.append((images, labels.reshape(-1, 1)))
    return tuple(splits)


def _read_batch(blob, name):
    """Unpickles one batch; returns ``(data (N, 3072) uint8, labels (N,) uint8)``."""
    try:
        batch = _BatchUnpickler(io.BytesIO(blob), encoding="bytes").load()
    except Exception as error:  # unpickling bad bytes can raise almost anything
        raise CorruptDatasetError(
            f"{name} is not a readable batch ({type(error).__name__}: {error})") from error
    if not isinstance(batch, dict):
        raise CorruptDatasetError(f"{name} holds a {type(batch).__name__}, expected a dict")
    data, labels = _entry(batch, "data", name), _entry(batch, "labels", name)
    if not (isinstance(data, np.ndarray) and data.dtype == np.uint8
            and data.ndim == 2 and data.shape[1] == _PIXELS):
        found = (f"{data.dtype} of shape {data.shape}" if isinstance(data, np.ndarray)
                 else type(data).__name__)
        raise CorruptDatasetError(
            f"{name}: expected b'data' to be uint8 of shape (N, {_PIXELS}), found {found}")
    try:
        labels = np.asarray(labels, dtype=np.int64).reshape(-1)
    except (TypeError, ValueError) as error:
        raise CorruptDatasetError(f"{name}: b'labels' is not a list of integers") from error
    if len(labels) != len(data):
        raise CorruptDatasetError(f"{name}: {len(data)} images but {len(labels)} labels")
    if labels.size and (labels.min() < 0 or labels.max() > 9):
        raise CorruptDatasetError(
            f"{name}: labels must be 0-9, found {labels.min()}-{labels.max()}")
    return data, labels.astype(np.uint8)


def _entry(batch, key, name):
    """Returns ``batch[b"key"]`` (or ``batch["key"]``), raising if neither exists."""
    for candidate in (key.encode(), key):
        if candidate in batch:
            return batch[candidate]
    raise CorruptDatasetError(f"{name} has no {key.encode()!r} entry")


class _BatchUnpickler(pickle.Unpickler):
    """An unpickler that builds only NumPy arrays and plain Python values.

    CIFAR-10 batches hold dicts, lists, bytes and one NumPy array; refusing
    every other global keeps a malicious archive from running code.
    """

    _ALLOWED = {
        ("numpy.core.multiarray", "_reconstruct"),  # arrays, protocols 0-4
        ("numpy.core.multiarray", "scalar"),
        ("numpy.core.numeric", "_frombuffer"),  # arrays, protocol 5
        ("numpy", "ndarray"),
        ("numpy", "dtype"),
        ("_codecs", "encode"),  # how protocol 2 stores bytes under Python 3
    }

    def find_class(self, module, name):
        """Returns an allowed global; raises ``pickle.UnpicklingError`` for any other."""
        # NumPy 2 renamed numpy.core to numpy._core; pickles name either.
        canonical = module
        if module.startswith("numpy._core"):
            canonical = "numpy.core" + module[len("numpy._core"):]
        if (canonical, name) not in self._ALLOWED:
            raise pickle.UnpicklingError(f"refusing to load {module}.{name}")
        if canonical.startswith("numpy.core"):
            try:  # the new name first: the old one warns under NumPy 2
                module = importlib.import_module("numpy._core" + canonical[len("numpy.core"):])
            except ImportError:
                module = importlib.import_module(canonical)
            return getattr(module, name)
        return super().find_class(module, name)
