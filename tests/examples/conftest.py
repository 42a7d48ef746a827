"""Fixtures for the example smoke tests: tiny datasets in the real formats.

The examples load their data through ``minikeras.datasets``, so the tests
write small but well-formed copies of each file (``mnist.npz``, the four
gzipped Fashion-MNIST IDX files, ``cifar-10-python.tar.gz`` with its pickled
batches) into a temporary ``MINIKERAS_HOME``, and shrink the loaders' expected
counts and published checksums to match, so the loaders take them for the
real files without a warning. Known local copies are switched off
and downloads fail as on an offline machine, so nothing outside the temporary
folder is read and the network is never touched.

The images are learnable: every class lights up its own square of the image,
so a few training steps already beat chance.
"""
import gzip
import hashlib
import io
import pickle
import tarfile
import urllib.error

import numpy as np
import pytest

from minikeras.datasets import _files, cifar10, fashion_mnist, mnist

#: Sample counts of the tiny datasets: above the tests' ``--limit 256``, and
#: the CIFAR-10 training count splits into five batches of 64.
TRAIN_COUNT = 320
TEST_COUNT = 288


def _offline_download(url, path):
    raise urllib.error.URLError("[Errno -3] Temporary failure in name resolution")


def _class_images(count, image_shape, seed):
    """Noisy uint8 images whose label decides which square is bright."""
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 10, count).astype(np.uint8)
    images = rng.integers(0, 60, (count,) + image_shape, dtype=np.uint8)
    side = image_shape[0] // 4  # a 4 x 4 grid of squares, 10 of them used
    for index, label in enumerate(labels):
        row, column = divmod(int(label), 4)
        images[index, row * side:(row + 1) * side, column * side:(column + 1) * side] = 230
    return images, labels


def _idx_gz(array, magic_type):
    """A gzipped IDX file: magic, big-endian uint32 dimensions, then uint8 data."""
    header = bytes([0, 0, magic_type, array.ndim]) + np.array(array.shape, ">u4").tobytes()
    return gzip.compress(header + array.astype(np.uint8).tobytes(), mtime=0)


def _write_mnist(folder):
    x_train, y_train = _class_images(TRAIN_COUNT, (28, 28), seed=0)
    x_test, y_test = _class_images(TEST_COUNT, (28, 28), seed=1)
    np.savez_compressed(folder / "mnist.npz", x_train=x_train, y_train=y_train,
                        x_test=x_test, y_test=y_test)


def _write_fashion_mnist(folder):
    folder = folder / "fashion-mnist"
    folder.mkdir()
    for prefix, count, seed in (("train", TRAIN_COUNT, 2), ("t10k", TEST_COUNT, 3)):
        images, labels = _class_images(count, (28, 28), seed)
        (folder / f"{prefix}-images-idx3-ubyte.gz").write_bytes(_idx_gz(images, 0x08))
        (folder / f"{prefix}-labels-idx1-ubyte.gz").write_bytes(_idx_gz(labels, 0x08))


def _cifar_batch(count, seed):
    """A batch in the official layout: rows of 3072 bytes, channel by channel."""
    images, labels = _class_images(count, (32, 32, 3), seed)
    return {
        b"batch_label": f"batch {seed}".encode(),
        b"labels": labels.tolist(),
        b"data": np.ascontiguousarray(images.transpose(0, 3, 1, 2)).reshape(count, 3072),
        b"filenames": [f"image_{seed}_{index}.png".encode() for index in range(count)],
    }


def _write_cifar10(folder):
    batches = {f"data_batch_{number}": _cifar_batch(TRAIN_COUNT // 5, seed=10 + number)
               for number in range(1, 6)}
    batches["test_batch"] = _cifar_batch(TEST_COUNT, seed=20)
    batches["batches.meta"] = {b"label_names": [b"class"] * 10, b"num_vis": 3072}
    with tarfile.open(folder / "cifar-10-python.tar.gz", mode="w:gz") as archive:
        for name, batch in batches.items():
            blob = pickle.dumps(batch, protocol=2)
            info = tarfile.TarInfo(f"cifar-10-batches-py/{name}")
            info.size = len(blob)
            archive.addfile(info, io.BytesIO(blob))


@pytest.fixture(scope="session")
def _tiny_dataset_home(tmp_path_factory):
    """A ``MINIKERAS_HOME`` holding the three tiny datasets, written once."""
    home = tmp_path_factory.mktemp("minikeras_home")
    folder = home / "datasets"
    folder.mkdir()
    _write_mnist(folder)
    _write_fashion_mnist(folder)
    _write_cifar10(folder)
    return home


@pytest.fixture
def offline_datasets(monkeypatch):
    """No known local copies and no network, for whatever home a test picks."""
    monkeypatch.setattr(mnist, "_LOCAL_COPIES", ())
    monkeypatch.setattr(fashion_mnist, "_LOCAL_DIRS", ())
    monkeypatch.setattr(cifar10, "_LOCAL_COPIES", ())
    monkeypatch.setattr(_files, "_download", _offline_download)


def _digest(path, algorithm):
    return hashlib.new(algorithm, path.read_bytes()).hexdigest()


def tiny_dataset_settings(folder):
    """``{(module name, attribute): value}`` that make the loaders take the
    tiny files in ``folder`` for the real ones (their counts and checksums);
    also applied in a subprocess by ``_readme_runner.py``."""
    sizes = {"train": TRAIN_COUNT, "test": TEST_COUNT}
    settings = {(module.__name__, "_SPLIT_SIZES"): sizes for module in (mnist, fashion_mnist, cifar10)}
    settings[(mnist.__name__, "_SHA256")] = _digest(folder / "mnist.npz", "sha256")
    settings[(fashion_mnist.__name__, "_MD5")] = {
        name: _digest(folder / "fashion-mnist" / name, "md5") for name in fashion_mnist._MD5}
    settings[(cifar10.__name__, "_MD5")] = _digest(folder / "cifar-10-python.tar.gz", "md5")
    return settings


@pytest.fixture
def tiny_datasets(_tiny_dataset_home, offline_datasets, monkeypatch):
    """Makes ``minikeras.datasets`` load the tiny files; returns the cache folder."""
    monkeypatch.setenv("MINIKERAS_HOME", str(_tiny_dataset_home))
    folder = _tiny_dataset_home / "datasets"
    for (module_name, attribute), value in tiny_dataset_settings(folder).items():
        monkeypatch.setattr(f"{module_name}.{attribute}", value)
    return folder


@pytest.fixture
def empty_datasets(tmp_path, offline_datasets, monkeypatch):
    """An empty cache on an offline machine; returns the cache folder."""
    monkeypatch.setenv("MINIKERAS_HOME", str(tmp_path / "home"))
    return tmp_path / "home" / "datasets"
