"""Fashion-MNIST, Zalando's article images, from its four gzipped IDX files.

The files live in ``~/.minikeras/datasets/fashion-mnist/``. Debian's
``dataset-fashion-mnist`` package installs them in
``/usr/share/datasets/fashion-mnist``, which is used when the cache has none.

Labels: 0 T-shirt/top, 1 Trouser, 2 Pullover, 3 Dress, 4 Coat, 5 Sandal,
6 Shirt, 7 Sneaker, 8 Bag, 9 Ankle boot.

Example:
    >>> from minikeras.datasets import fashion_mnist
    >>> (x_train, y_train), (x_test, y_test) = fashion_mnist.load_data()
    >>> x_train.shape, y_train.shape, x_test.shape, x_train.dtype
    ((60000, 28, 28), (60000,), (10000, 28, 28), dtype('uint8'))
"""
import functools

from minikeras.datasets import _files, _idx

_SUBDIR = "fashion-mnist"
# Keras's mirror first, Zalando's own site as the fallback; same file names.
_BASE_URLS = (
    "https://storage.googleapis.com/tensorflow/tf-keras-datasets/",
    "http://fashion-mnist.s3-website.eu-central-1.amazonaws.com/",
)
# The MD5 checksums Zalando publishes beside the files (the project's README).
_MD5 = {
    "train-images-idx3-ubyte.gz": "8d4fb7e6c68d591d4c3dfef9ec88bf0d",
    "train-labels-idx1-ubyte.gz": "25c81989df183df01b3e8a0aad5dffbe",
    "t10k-images-idx3-ubyte.gz": "bef4ecab320f06d8554ea6380940ec79",
    "t10k-labels-idx1-ubyte.gz": "bb300cfdad3c16e7a12a480ee83cd310",
}
# Folders that may already hold the files, gzipped or not: Debian's package
# and Keras's own cache.
_LOCAL_DIRS = ("/usr/share/datasets/fashion-mnist", "~/.keras/datasets/fashion-mnist")
# The counts a complete file holds; tests shrink them.
_SPLIT_SIZES = {"train": 60000, "test": 10000}
_PREFIXES = {"train": "train", "test": "t10k"}


def load_data():
    """Loads Fashion-MNIST, downloading it on first use.

    Each file is looked for in the cache directory, then in the known local
    copies, then downloaded; see `minikeras.datasets` for the checks made.

    Returns:
        ``((x_train, y_train), (x_test, y_test))``: uint8 images of shape
        ``(60000, 28, 28)`` and ``(10000, 28, 28)``, uint8 labels 0-9 of shape
        ``(60000,)`` and ``(10000,)``.

    Raises:
        DatasetNotFoundError: A file has no usable copy and there is no
            network; the message says where to put it.
        CorruptDatasetError: A downloaded file failed its checks.
    """
    splits = []
    for split, count in _SPLIT_SIZES.items():
        prefix = _PREFIXES[split]
        images = _fetch(f"{prefix}-images-idx3-ubyte.gz",
                        functools.partial(_idx.read_images, count=count))
        labels = _fetch(f"{prefix}-labels-idx1-ubyte.gz",
                        functools.partial(_idx.read_labels, count=count, num_classes=10))
        splits.append((images, labels))
    return tuple(splits)


def _fetch(name, parse):
    """Gets one of the four files through `_files.fetch`."""
    remote = _files.RemoteFile(
        dataset="Fashion-MNIST",
        name=name,
        urls=tuple(base + name for base in _BASE_URLS),
        checksum=("md5", _MD5[name]),
        subdir=_SUBDIR,
        siblings=tuple(other for other in _MD5 if other != name),
    )
    uncompressed = name[: -len(".gz")]
    local_copies = [f"{folder}/{file}" for folder in _LOCAL_DIRS for file in (name, uncompressed)]
    return _files.fetch(remote, parse, local_copies=local_copies)
