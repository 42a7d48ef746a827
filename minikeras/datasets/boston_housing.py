"""Boston housing prices (regression), from Keras's ``boston_housing.npz``.

506 houses, 13 features each, the target the median value in k$; split into
train and test after a seeded shuffle, as ``keras.datasets.boston_housing``
does. A plain numeric ``.npz``: read with pickles refused.

Example:
    >>> from minikeras.datasets import boston_housing
    >>> (x_train, y_train), (x_test, y_test) = boston_housing.load_data()
    >>> x_train.shape, x_test.shape
    ((404, 13), (102, 13))
"""
import numbers

import numpy

from minikeras.datasets import _files, _npz
from minikeras.datasets._errors import CorruptDatasetError

_URL = "https://storage.googleapis.com/tensorflow/tf-keras-datasets/boston_housing.npz"
_SHA256 = "f553886a1f8d56431e820c5b82552d9d95cfcb96d1e678153f8839538947dff5"


def load_data(path="boston_housing.npz", test_split=0.2, seed=113):
    """Loads Boston housing with Keras's split.

    Args:
        path: the file name in the cache; Keras's cache is searched too.
        test_split: the fraction kept for the test set, in [0, 1).
        seed: the shuffling seed.

    Returns:
        ``((x_train, y_train), (x_test, y_test))`` as float64 arrays of shape
        ``(n, 13)`` and ``(n,)``.

    Raises:
        DatasetNotFoundError, CorruptDatasetError: no copy, or a malformed file.
        ValueError: ``test_split`` outside [0, 1).
    """
    if isinstance(test_split, bool) or not isinstance(test_split, numbers.Real) or not 0 <= test_split < 1:
        raise ValueError(f"boston_housing.load_data: test_split must be in [0, 1), received {test_split!r}.")
    remote = _files.RemoteFile(dataset="Boston housing", name=path, urls=(_URL,), checksum=("sha256", _SHA256))
    x, y = _files.fetch(remote, _read, local_copies=(f"~/.keras/datasets/{path}",))
    order = numpy.arange(len(x))
    numpy.random.RandomState(seed).shuffle(order)
    x, y = x[order], y[order]
    split = int(len(x) * (1 - test_split))
    return (x[:split], y[:split]), (x[split:], y[split:])


def _read(path):
    arrays = _npz.read_npz(path, ("x", "y"))
    x, y = arrays["x"], arrays["y"]
    if x.ndim != 2 or x.dtype.kind != "f" or y.shape != (len(x),) or y.dtype.kind != "f":
        raise CorruptDatasetError(f"{path}: expected float x of shape (n, features) and y of shape (n,), "
                                  f"found x {x.dtype} {x.shape} and y {y.dtype} {y.shape}")
    return x, y
