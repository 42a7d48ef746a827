"""California housing prices (regression), from Keras's ``california_housing.npz``.

20,640 census block groups of the 1990 U.S. census, 8 features each
(median income, house age, average rooms, average bedrooms, population,
average occupancy, latitude, longitude), the target the median house value
in dollars; split into train and test after a seeded shuffle, as
``keras.datasets.california_housing`` does. ``version="small"`` keeps the
file's first 600 rows (Keras's stand-in for Boston housing). A plain
numeric ``.npz``: read with pickles refused.

Example:
    >>> from minikeras.datasets import california_housing
    >>> (x_train, y_train), (x_test, y_test) = california_housing.load_data()
    >>> x_train.shape, x_test.shape
    ((16512, 8), (4128, 8))
"""
import numbers

import numpy

from minikeras.datasets import _files, _npz
from minikeras.datasets._errors import CorruptDatasetError

_URL = "https://storage.googleapis.com/tensorflow/tf-keras-datasets/california_housing.npz"
_SHA256 = "1a2e3a52e0398de6463aebe6f4a8da34fb21fbb6b934cf88c3425e766f2a1a6f"
_FEATURES = 8
_SMALL_ROWS = 600
_VERSIONS = ("small", "large")


def load_data(version="large", path="california_housing.npz", test_split=0.2, seed=113):
    """Loads California housing with Keras's split.

    Args:
        version: ``"large"`` (all 20,640 rows) or ``"small"`` (the first 600).
        path: the file name in the cache; Keras's cache is searched too.
        test_split: the fraction kept for the test set, in [0, 1).
        seed: the shuffling seed.

    Returns:
        ``((x_train, y_train), (x_test, y_test))``: x of shape ``(n, 8)``, y of
        shape ``(n,)``, with the file's float dtype.

    Raises:
        DatasetNotFoundError, CorruptDatasetError: no copy, or a malformed file.
        ValueError: ``version`` not "small" or "large", ``test_split`` outside [0, 1).
    """
    if version not in _VERSIONS:
        raise ValueError(f"california_housing.load_data expects version 'small' or 'large', received {version!r}.")
    if isinstance(test_split, bool) or not isinstance(test_split, numbers.Real) or not 0 <= test_split < 1:
        raise ValueError(f"california_housing.load_data: test_split must be in [0, 1), received {test_split!r}.")
    remote = _files.RemoteFile(dataset="California housing", name=path, urls=(_URL,), checksum=("sha256", _SHA256))
    x, y = _files.fetch(remote, _read, local_copies=(f"~/.keras/datasets/{path}",))
    if version == "small":
        x, y = x[:_SMALL_ROWS], y[:_SMALL_ROWS]
    order = numpy.arange(len(x))
    numpy.random.RandomState(seed).shuffle(order)
    x, y = x[order], y[order]
    split = int(len(x) * (1 - test_split))
    return (x[:split], y[:split]), (x[split:], y[split:])


def _read(path):
    arrays = _npz.read_npz(path, ("x", "y"))
    x, y = arrays["x"], arrays["y"]
    if x.ndim != 2 or x.shape[1] != _FEATURES or x.dtype.kind != "f" or y.shape != (len(x),) or y.dtype.kind != "f":
        raise CorruptDatasetError(f"{path}: expected float x of shape (n, {_FEATURES}) and y of shape (n,), "
                                  f"found x {x.dtype} {x.shape} and y {y.dtype} {y.shape}")
    return x, y
