"""CIFAR-100 (pickled batches in a tar, read with a restricted unpickler) and
Boston housing (a numeric npz, Keras's split)."""
import io
import pickle
import tarfile

import numpy as np
import pytest

from minikeras.datasets import CorruptDatasetError, DatasetNotFoundError, boston_housing, cifar100


@pytest.fixture(autouse=True)
def small_and_isolated(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "user"))
    monkeypatch.setattr(cifar100, "_LOCAL_COPIES", ())
    monkeypatch.setattr(cifar100, "_SPLIT_SIZES", {"train": 5, "test": 3})


def _split(count, seed):
    rng = np.random.default_rng(seed)
    return {
        b"filenames": [f"img{index}.png".encode() for index in range(count)],
        b"batch_label": b"training batch 1 of 1",
        b"fine_labels": rng.integers(0, 100, count).tolist(),
        b"coarse_labels": rng.integers(0, 20, count).tolist(),
        b"data": rng.integers(0, 256, (count, 3072), dtype=np.uint8),
    }


def _tar(members):
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for name, content in members.items():
            blob = content if isinstance(content, bytes) else pickle.dumps(content, protocol=2)
            info = tarfile.TarInfo(f"cifar-100-python/{name}")
            info.size = len(blob)
            archive.addfile(info, io.BytesIO(blob))
    return buffer.getvalue()


def _install(cache, members):
    path = cache / "cifar-100-python.tar.gz"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(_tar(members))


@pytest.mark.parametrize("mode", ["fine", "coarse"])
def test_cifar100_layout_and_labels(isolated_datasets, mode):
    train, test = _split(5, 1), _split(3, 2)
    _install(isolated_datasets, {"train": train, "test": test, "meta": {b"fine_label_names": []}})
    with pytest.warns(UserWarning, match="not the published file"):
        (x_train, y_train), (x_test, y_test) = cifar100.load_data(label_mode=mode)
    assert x_train.shape == (5, 32, 32, 3) and x_train.dtype == np.uint8 and x_test.shape == (3, 32, 32, 3)
    # Channel-by-channel rows: pixel (row 0, col 1) of image 2 is bytes 1, 1025, 2049.
    np.testing.assert_array_equal(x_train[2, 0, 1], train[b"data"][2, [1, 1025, 2049]])
    assert y_train.shape == (5, 1) and y_train.dtype == np.int64
    np.testing.assert_array_equal(y_train[:, 0], train[f"{mode}_labels".encode()])
    np.testing.assert_array_equal(y_test[:, 0], test[f"{mode}_labels".encode()])


def test_cifar100_bad_label_mode():
    with pytest.raises(ValueError, match="label_mode"):
        cifar100.load_data(label_mode="medium")


def test_cifar100_offline(isolated_datasets):
    with pytest.raises(DatasetNotFoundError, match="cifar-100-python.tar.gz"):
        cifar100.load_data()


@pytest.mark.parametrize("members, message", [
    ({"train": _split(5, 1)}, "has no cifar-100-python/test"),
    ({"train": _split(4, 1), "test": _split(3, 2)}, "expected 5 train images"),
    ({"train": {**_split(5, 1), b"fine_labels": [100] * 5}, "test": _split(3, 2)}, "fine labels must be"),
    ({"train": {b"data": np.zeros((5, 10), np.uint8)}, "test": _split(3, 2)}, "uint8 of shape"),
    ({"train": b"\x80\x02cos\nsystem\nq\x00.", "test": _split(3, 2)}, "refusing to load os.system"),
])
def test_cifar100_malformed(tmp_path, members, message):
    path = tmp_path / "c.tar.gz"
    path.write_bytes(_tar(members))
    with pytest.raises(CorruptDatasetError, match=message):
        cifar100.read_archive(path)


def _boston_file(cache, count=20):
    rng = np.random.default_rng(3)
    x, y = rng.normal(size=(count, 13)), rng.uniform(5, 50, count)
    path = cache / "boston_housing.npz"
    path.parent.mkdir(parents=True, exist_ok=True)
    buffer = io.BytesIO()
    np.savez(buffer, x=x, y=y)
    path.write_bytes(buffer.getvalue())
    return x, y


def test_boston_split_like_keras(isolated_datasets):
    x, y = _boston_file(isolated_datasets)
    with pytest.warns(UserWarning, match="not the published file"):
        (x_train, y_train), (x_test, y_test) = boston_housing.load_data(test_split=0.25, seed=7)
    order = np.arange(20)
    np.random.RandomState(7).shuffle(order)
    np.testing.assert_array_equal(x_train, x[order][:15])
    np.testing.assert_array_equal(y_test, y[order][15:])
    assert x_test.shape == (5, 13) and y_train.shape == (15,)


def test_boston_rejects_pickles_and_wrong_shapes(tmp_path):
    buffer = io.BytesIO()
    np.savez(buffer, x=np.empty(2, dtype=object), y=np.zeros(2))
    path = tmp_path / "b.npz"
    path.write_bytes(buffer.getvalue())
    with pytest.raises(CorruptDatasetError):
        boston_housing._read(path)
    buffer = io.BytesIO()
    np.savez(buffer, x=np.zeros((3, 13)), y=np.zeros(4))
    path.write_bytes(buffer.getvalue())
    with pytest.raises(CorruptDatasetError, match="expected float x"):
        boston_housing._read(path)


def test_boston_bad_split():
    with pytest.raises(ValueError, match="test_split"):
        boston_housing.load_data(test_split=-0.1)


def test_cifar100_oversized_member_is_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(cifar100, "_MAX_MEMBER_BYTES", 1000)
    path = tmp_path / "c.tar.gz"
    path.write_bytes(_tar({"train": _split(5, 1), "test": _split(3, 2)}))
    with pytest.raises(CorruptDatasetError, match="declares"):
        cifar100.read_archive(path)
