"""Tests for minikeras/datasets/mnist.py: mnist.npz in Keras's format."""
import warnings

import numpy as np
import pytest

import minikeras.datasets
from minikeras.datasets import CorruptDatasetError, DatasetNotFoundError, mnist


@pytest.fixture
def small_mnist(monkeypatch, build):
    """Shrinks MNIST to 6 training and 4 test images; returns the arrays and the npz bytes."""
    monkeypatch.setattr(mnist, "_SPLIT_SIZES", {"train": 6, "test": 4})
    arrays = build.mnist_arrays(train=6, test=4)
    return arrays, build.npz_bytes(arrays)


def assert_loaded(result, arrays):
    (x_train, y_train), (x_test, y_test) = result
    for name, array in zip(("x_train", "y_train", "x_test", "y_test"), (x_train, y_train, x_test, y_test)):
        assert array.dtype == np.uint8
        np.testing.assert_array_equal(array, arrays[name])
    assert x_train.shape == (6, 28, 28) and y_train.shape == (6,)
    assert x_test.shape == (4, 28, 28) and y_test.shape == (4,)


def test_reachable_as_keras_spells_it():
    assert minikeras.datasets.mnist.load_data is mnist.load_data


def test_loads_cached_npz_matching_the_checksum(small_mnist, build, isolated_datasets, monkeypatch):
    arrays, data = small_mnist
    build.write(isolated_datasets / "mnist.npz", data)
    monkeypatch.setattr(mnist, "_SHA256", build.sha256(data))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert_loaded(mnist.load_data(), arrays)


def test_cached_npz_with_another_checksum_is_used_with_a_warning(small_mnist, build, isolated_datasets):
    arrays, data = small_mnist
    build.write(isolated_datasets / "mnist.npz", data)
    with pytest.warns(UserWarning, match="not the published file"):
        assert_loaded(mnist.load_data(), arrays)


def test_downloads_verifies_and_caches(small_mnist, build, isolated_datasets, downloads, monkeypatch):
    arrays, data = small_mnist
    monkeypatch.setattr(mnist, "_SHA256", build.sha256(data))
    downloads.serve(mnist._URL, data)
    assert_loaded(mnist.load_data(), arrays)
    assert (isolated_datasets / "mnist.npz").read_bytes() == data
    assert downloads.calls == ["https://storage.googleapis.com/tensorflow/tf-keras-datasets/mnist.npz"]


def test_download_with_wrong_checksum_is_refused(small_mnist, isolated_datasets, downloads):
    _, data = small_mnist
    downloads.serve(mnist._URL, data)  # not the bytes Keras publishes
    with pytest.raises(CorruptDatasetError, match="731c5ac602752760c8e48fbffcf8c3b850d9dc2a2aedcf2cc48468fc17b673d1"):
        mnist.load_data()
    assert not (isolated_datasets / "mnist.npz").exists()
    assert list(isolated_datasets.iterdir()) == []


def test_truncated_cached_npz_is_downloaded_again(small_mnist, build, isolated_datasets, downloads, monkeypatch):
    arrays, data = small_mnist
    cached = build.write(isolated_datasets / "mnist.npz", data[: len(data) - 300])
    monkeypatch.setattr(mnist, "_SHA256", build.sha256(data))
    downloads.serve(mnist._URL, data)
    with pytest.warns(UserWarning, match="not a complete .npz"):
        assert_loaded(mnist.load_data(), arrays)
    assert cached.read_bytes() == data


def test_offline_names_the_file_and_where_to_put_it(isolated_datasets):
    with pytest.raises(DatasetNotFoundError) as raised:
        mnist.load_data()
    message = str(raised.value)
    assert "'mnist.npz'" in message
    assert str(isolated_datasets / "mnist.npz") in message
    assert mnist._URL in message


def test_keras_cache_copy_is_used(small_mnist, build, tmp_path, monkeypatch, downloads):
    arrays, data = small_mnist
    copy = build.write(tmp_path / "keras" / "mnist.npz", data)
    monkeypatch.setattr(mnist, "_LOCAL_COPIES", (str(copy),))
    assert_loaded(mnist.load_data(), arrays)
    assert downloads.calls == []


def test_path_argument(small_mnist, build, tmp_path):
    arrays, data = small_mnist
    elsewhere = build.write(tmp_path / "my" / "digits.npz", data)
    with pytest.warns(UserWarning):
        assert_loaded(mnist.load_data(path=str(elsewhere)), arrays)


@pytest.mark.parametrize("damage, message", [
    (lambda arrays: arrays.pop("y_test"), "no array named y_test"),
    (lambda arrays: arrays.update(x_train=arrays["x_train"].astype(np.float32)), "expected x_train to be uint8"),
    (lambda arrays: arrays.update(x_test=arrays["x_test"][:3]), r"shape \(4, 28, 28\)"),
    (lambda arrays: arrays["y_train"].__setitem__(0, 11), "label 11, above 9"),
])
def test_malformed_npz(small_mnist, build, tmp_path, damage, message):
    arrays = dict(small_mnist[0])
    arrays["y_train"] = arrays["y_train"].copy()
    damage(arrays)
    path = build.write(tmp_path / "mnist.npz", build.npz_bytes(arrays))
    with pytest.raises(CorruptDatasetError, match=message):
        mnist.read_npz(path)


def test_not_a_zip(tmp_path, build):
    path = build.write(tmp_path / "mnist.npz", b"<html>Service Unavailable</html>")
    with pytest.raises(CorruptDatasetError, match="not a complete .npz"):
        mnist.read_npz(path)


def test_a_lone_npy_is_not_an_npz(tmp_path):
    path = tmp_path / "mnist.npz"
    with path.open("wb") as stream:
        np.save(stream, np.zeros((2, 28, 28), np.uint8))
    with pytest.raises(CorruptDatasetError, match="single array"):
        mnist.read_npz(path)


def test_member_declaring_more_than_its_array_needs_is_refused_before_reading(small_mnist, build, tmp_path):
    import io
    import zipfile

    arrays, _ = small_mnist
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for key, array in arrays.items():
            payload = io.BytesIO()
            np.save(payload, array if key != "x_train" else np.zeros((4000, 28, 28), np.uint8))
            archive.writestr(f"{key}.npy", payload.getvalue())
    path = build.write(tmp_path / "bomb.npz", buffer.getvalue())
    with pytest.raises(CorruptDatasetError, match=r"x_train.npy declares 31\d+ bytes, more than its array"):
        mnist.read_npz(path)
