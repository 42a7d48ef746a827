"""california_housing.load_data, offline, on small files in Keras's format
(``x``: float (n, 8), ``y``: float (n,), in an ``.npz``), and against Keras
3.15's own loader where Keras is installed."""
import io
import os

import numpy as np
import pytest

from minikeras.datasets import CorruptDatasetError, DatasetNotFoundError, california_housing


@pytest.fixture(autouse=True)
def no_keras_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "user"))  # no ~/.keras/datasets copy


def housing_arrays(count=750, seed=3, dtype=np.float64):
    rng = np.random.default_rng(seed)
    x = np.column_stack([rng.uniform(0.5, 15, count), rng.integers(1, 52, count), rng.uniform(1, 10, count),
                         rng.uniform(0.5, 3, count), rng.integers(3, 35000, count), rng.uniform(1, 6, count),
                         rng.uniform(32.5, 42, count), rng.uniform(-124.3, -114.3, count)]).astype(dtype)
    return x, rng.uniform(15000, 500001, count).astype(dtype)


def npz_bytes(**arrays):
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    return buffer.getvalue()


def keras_split(x, y, test_split, seed):
    order = np.arange(len(x))
    np.random.RandomState(seed).shuffle(order)
    cut = int(len(x) * (1 - test_split))
    return (x[order][:cut], y[order][:cut]), (x[order][cut:], y[order][cut:])


def test_download_is_checked_cached_and_split_like_keras(isolated_datasets, downloads, build, monkeypatch):
    x, y = housing_arrays()
    blob = npz_bytes(x=x, y=y)
    downloads.serve(california_housing._URL, blob)
    monkeypatch.setattr(california_housing, "_SHA256", build.sha256(blob))  # the fixture stands for the real file

    (x_train, y_train), (x_test, y_test) = california_housing.load_data()

    assert downloads.calls == ["https://storage.googleapis.com/tensorflow/tf-keras-datasets/california_housing.npz"]
    assert (isolated_datasets / "california_housing.npz").read_bytes() == blob
    assert build.no_partial_files(isolated_datasets)
    (x_train_expected, y_train_expected), (x_test_expected, y_test_expected) = keras_split(x, y, 0.2, 113)
    np.testing.assert_array_equal(x_train, x_train_expected)
    np.testing.assert_array_equal(y_test, y_test_expected)
    assert x_train.shape == (600, 8) and x_test.shape == (150, 8) and y_train.shape == (600,)
    assert x_train.dtype == np.float64 and y_train.dtype == np.float64
    california_housing.load_data()  # from the cache now
    assert len(downloads.calls) == 1


def test_small_version_is_the_first_600_rows(isolated_datasets):
    x, y = housing_arrays(dtype=np.float32)
    build_path = isolated_datasets / "california_housing.npz"
    build_path.parent.mkdir(parents=True)
    build_path.write_bytes(npz_bytes(x=x, y=y))
    with pytest.warns(UserWarning, match="not the published file"):
        (x_train, y_train), (x_test, y_test) = california_housing.load_data(version="small", test_split=0.25, seed=7)
    expected = keras_split(x[:600], y[:600], 0.25, 7)
    np.testing.assert_array_equal(x_train, expected[0][0])
    np.testing.assert_array_equal(y_test, expected[1][1])
    assert x_train.shape == (450, 8) and x_test.shape == (150, 8) and x_train.dtype == np.float32


def test_offline_error_says_where_to_put_the_file(isolated_datasets):
    with pytest.raises(DatasetNotFoundError) as error:
        california_housing.load_data()
    message = str(error.value)
    assert str(isolated_datasets / "california_housing.npz") in message
    assert california_housing._URL in message and california_housing._SHA256 in message


def test_a_corrupt_download_is_refused_and_not_cached(isolated_datasets, downloads):
    downloads.serve(california_housing._URL, npz_bytes(x=np.zeros((4, 8)), y=np.zeros(4)))
    with pytest.raises(CorruptDatasetError, match="sha256"):
        california_housing.load_data()
    assert not (isolated_datasets / "california_housing.npz").exists()


def test_wrong_shapes_and_pickles_are_refused(tmp_path):
    path = tmp_path / "c.npz"
    path.write_bytes(npz_bytes(x=np.zeros((5, 13)), y=np.zeros(5)))  # Boston's 13 features
    with pytest.raises(CorruptDatasetError, match=r"float x of shape \(n, 8\)"):
        california_housing._read(path)
    path.write_bytes(npz_bytes(x=np.empty(2, dtype=object), y=np.zeros(2)))
    with pytest.raises(CorruptDatasetError):
        california_housing._read(path)


@pytest.mark.parametrize("arguments, message", [({"version": "medium"}, "version 'small' or 'large'"),
                                                ({"test_split": 1.0}, "test_split"),
                                                ({"test_split": -0.1}, "test_split")])
def test_bad_arguments_are_refused_before_any_file_is_read(arguments, message, downloads):
    with pytest.raises(ValueError, match=message):
        california_housing.load_data(**arguments)
    assert downloads.calls == []


@pytest.mark.parametrize("arguments", [{}, {"version": "small", "test_split": 0.3, "seed": 5}])
def test_matches_keras(isolated_datasets, monkeypatch, arguments):
    os.environ.setdefault("KERAS_BACKEND", "tensorflow")
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    pytest.importorskip("tensorflow")
    keras = pytest.importorskip("keras")
    from keras.src.datasets import california_housing as keras_module

    x, y = housing_arrays(count=700, seed=11)
    path = isolated_datasets / "california_housing.npz"
    path.parent.mkdir(parents=True)
    path.write_bytes(npz_bytes(x=x, y=y))
    monkeypatch.setattr(keras_module, "get_file", lambda *args, **kwargs: str(path))
    expected = keras.datasets.california_housing.load_data(**arguments)
    with pytest.warns(UserWarning):
        got = california_housing.load_data(**arguments)
    for keras_split_arrays, our_split in zip(expected, got):
        for keras_array, our_array in zip(keras_split_arrays, our_split):
            assert keras_array.dtype == our_array.dtype
            np.testing.assert_array_equal(keras_array, our_array)
