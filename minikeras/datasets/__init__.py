"""Datasets in Keras's format: MNIST, Fashion-MNIST, CIFAR-10 and CIFAR-100,
IMDB, Reuters, Boston and California housing.

Each submodule has a ``load_data()`` that returns
``((x_train, y_train), (x_test, y_test))`` as NumPy arrays, exactly as
``keras.datasets`` does (uint8 images; IMDB and Reuters: object arrays of
word-id lists; Boston housing: float64; California housing: the file's floats).

Files are kept in ``~/.minikeras/datasets`` (``$MINIKERAS_HOME/datasets``
when ``MINIKERAS_HOME`` is set). A missing file is taken from a known local
copy (Debian's ``dataset-fashion-mnist`` package, Keras's cache) or else
downloaded, with a progress bar, checked against its published checksum and
moved into the cache only when complete. A cached file is checked by reading
it completely; a corrupt one is downloaded again, never used. On a machine
with no network, `DatasetNotFoundError` says which file to put where.

Example:
    >>> from minikeras.datasets import mnist, fashion_mnist, cifar10
    >>> (x_train, y_train), (x_test, y_test) = cifar10.load_data()
    >>> x_train.shape, y_train.shape
    ((50000, 32, 32, 3), (50000, 1))
"""
from minikeras.datasets import (
    boston_housing, california_housing, cifar10, cifar100, fashion_mnist, imdb, mnist, reuters,
)
from minikeras.datasets._errors import CorruptDatasetError, DatasetError, DatasetNotFoundError
from minikeras.datasets._files import cache_dir

__all__ = [
    "mnist", "fashion_mnist", "cifar10", "cifar100", "imdb", "reuters", "boston_housing", "california_housing",
    "DatasetError", "DatasetNotFoundError", "CorruptDatasetError", "cache_dir",
]
