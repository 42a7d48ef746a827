"""Fixtures for the dataset tests: an isolated cache, no network, file builders.

Every test gets its own ``MINIKERAS_HOME`` under ``tmp_path``, no known local
copies (so the real ``/usr/share`` files are used only where a test asks) and
a downloader that fails as an offline machine does, so no test touches the
network. The builders write small files in each real format.
"""
import gzip
import hashlib
import io
import pickle
import tarfile
import types
import urllib.error

import numpy as np
import pytest

from minikeras.datasets import _files, cifar10, fashion_mnist, mnist


# The real downloader, kept before any test replaces it.
_REAL_DOWNLOAD = _files._download


def _offline_download(url, path):
    raise urllib.error.URLError("[Errno -3] Temporary failure in name resolution")


@pytest.fixture(autouse=True)
def isolated_datasets(tmp_path, monkeypatch):
    """Points the cache at ``tmp_path/home/datasets``; no local copies, no network."""
    monkeypatch.setenv("MINIKERAS_HOME", str(tmp_path / "home"))
    monkeypatch.setattr(mnist, "_LOCAL_COPIES", ())
    monkeypatch.setattr(fashion_mnist, "_LOCAL_DIRS", ())
    monkeypatch.setattr(cifar10, "_LOCAL_COPIES", ())
    monkeypatch.setattr(_files, "_download", _offline_download)
    return tmp_path / "home" / "datasets"


class FakeDownloads:
    """A stand-in for `_files._download` serving bytes by URL and recording calls."""

    def __init__(self):
        self.served = {}
        self.calls = []

    def serve(self, url, data):
        """Makes ``url`` answer with ``data`` (bytes) or raise ``data`` (an exception)."""
        self.served[url] = data

    def __call__(self, url, path):
        self.calls.append(url)
        data = self.served.get(url)
        if data is None:
            raise urllib.error.URLError("[Errno -3] Temporary failure in name resolution")
        if isinstance(data, BaseException):
            with open(path, "wb") as out:  # a partial file, as a dropped connection leaves
                out.write(b"partial")
            raise data
        with open(path, "wb") as out:
            out.write(data)


@pytest.fixture
def real_download():
    """The module's own `_download` (tests patch ``urlopen`` under it)."""
    return _REAL_DOWNLOAD


@pytest.fixture
def downloads(monkeypatch):
    """Replaces the downloader with a `FakeDownloads` the test fills."""
    fake = FakeDownloads()
    monkeypatch.setattr(_files, "_download", fake)
    return fake


def sha256(data):
    return hashlib.sha256(data).hexdigest()


def md5(data):
    return hashlib.md5(data).hexdigest()


def idx_bytes(array, magic_type=0x08, gzipped=True):
    """Encodes ``array`` as an IDX file (big-endian dims and data)."""
    big_endian = {0x08: "u1", 0x09: "i1", 0x0B: ">i2", 0x0C: ">i4", 0x0D: ">f4", 0x0E: ">f8"}
    header = bytes([0, 0, magic_type, array.ndim]) + np.array(array.shape, ">u4").tobytes()
    raw = header + np.asarray(array, big_endian[magic_type]).tobytes()
    return gzip.compress(raw, mtime=0) if gzipped else raw


def random_images(count, shape=(28, 28), seed=0):
    return np.random.default_rng(seed).integers(0, 256, (count,) + shape, dtype=np.uint8)


def random_labels(count, seed=1):
    return np.random.default_rng(seed).integers(0, 10, count, dtype=np.uint8)


def mnist_arrays(train=6, test=4):
    return {
        "x_train": random_images(train, seed=0), "y_train": random_labels(train, seed=1),
        "x_test": random_images(test, seed=2), "y_test": random_labels(test, seed=3),
    }


def npz_bytes(arrays):
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    return buffer.getvalue()


def cifar_batch(count, seed):
    """A batch dict in the official layout: rows of 3072 bytes, channel by channel."""
    rng = np.random.default_rng(seed)
    return {
        b"batch_label": f"batch {seed}".encode(),
        b"labels": rng.integers(0, 10, count).tolist(),
        b"data": rng.integers(0, 256, (count, 3072), dtype=np.uint8),
        b"filenames": [f"image_{seed}_{index}.png".encode() for index in range(count)],
    }


def cifar_tar_bytes(batches, folder="cifar-10-batches-py", compression="gz"):
    """Packs ``{name: batch or raw bytes}`` as the official tar archive does."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode=f"w:{compression}") as archive:
        for name, batch in batches.items():
            blob = batch if isinstance(batch, bytes) else pickle.dumps(batch, protocol=2)
            info = tarfile.TarInfo(f"{folder}/{name}")
            info.size = len(blob)
            archive.addfile(info, io.BytesIO(blob))
    return buffer.getvalue()


def cifar_batches(train_sizes=(3, 2, 4, 1, 2), test_size=3):
    batches = {f"data_batch_{number}": cifar_batch(size, seed=number)
               for number, size in enumerate(train_sizes, start=1)}
    batches["test_batch"] = cifar_batch(test_size, seed=99)
    batches["batches.meta"] = {b"label_names": [b"airplane"] * 10, b"num_vis": 3072}
    return batches


@pytest.fixture
def build():
    """The file builders, as one namespace."""
    return types.SimpleNamespace(
        sha256=sha256, md5=md5, idx_bytes=idx_bytes, random_images=random_images,
        random_labels=random_labels, mnist_arrays=mnist_arrays, npz_bytes=npz_bytes,
        cifar_batch=cifar_batch, cifar_batches=cifar_batches, cifar_tar_bytes=cifar_tar_bytes,
        write=_write, no_partial_files=no_partial_files,
    )


def _write(path, data):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def no_partial_files(folder):
    """True when ``folder`` holds no leftover ``.part`` file from a download."""
    return not any(path.name.endswith(".part") for path in folder.rglob("*")) if folder.exists() else True

