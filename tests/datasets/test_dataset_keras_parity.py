"""The new dataset readers against Keras 3's own loaders, on the same small
files (skipped where TensorFlow/Keras is not installed). Keras's downloader
is replaced by one that returns the test's file."""
import io
import os
import pickle
import tarfile

import numpy as np
import pytest

os.environ.setdefault("KERAS_BACKEND", "tensorflow")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
pytest.importorskip("tensorflow")
keras = pytest.importorskip("keras")

from minikeras.datasets import boston_housing, cifar100, imdb, reuters  # noqa: E402


def _ragged(lists):
    array = np.empty(len(lists), dtype=object)
    for index, values in enumerate(lists):
        array[index] = list(values)
    return array


def _install(monkeypatch, cache, name, blob, keras_module):
    path = cache / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(blob)
    monkeypatch.setattr(keras_module, "get_file", lambda *args, **kwargs: str(path))
    return path


def _npz(**arrays):
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    return buffer.getvalue()


def _lists(count, seed):
    rng = np.random.default_rng(seed)
    return [rng.integers(1, 40, rng.integers(1, 12)).tolist() for _ in range(count)]


@pytest.mark.parametrize("kwargs", [{}, {"num_words": 20, "skip_top": 3, "maxlen": 9, "seed": 4},
                                    {"oov_char": None, "start_char": None, "index_from": 0}])
def test_imdb_matches_keras(isolated_datasets, monkeypatch, kwargs):
    from keras.src.datasets import imdb as keras_imdb

    blob = _npz(x_train=_ragged(_lists(12, 1)), y_train=np.arange(12) % 2,
                x_test=_ragged(_lists(9, 2)), y_test=np.arange(9) % 2)
    _install(monkeypatch, isolated_datasets, "imdb.npz", blob, keras_imdb)
    expected = keras.datasets.imdb.load_data(**kwargs)
    with pytest.warns(UserWarning):
        got = imdb.load_data(**kwargs)
    for (x_keras, y_keras), (x_ours, y_ours) in zip(expected, got):
        assert [list(s) for s in x_keras] == [list(s) for s in x_ours]
        np.testing.assert_array_equal(y_keras, y_ours)


def test_reuters_matches_keras(isolated_datasets, monkeypatch):
    from keras.src.datasets import reuters as keras_reuters

    blob = _npz(x=_ragged(_lists(30, 3)), y=np.arange(30) % 46)
    _install(monkeypatch, isolated_datasets, "reuters.npz", blob, keras_reuters)
    kwargs = {"num_words": 25, "test_split": 0.3, "seed": 9, "maxlen": 10}
    expected = keras.datasets.reuters.load_data(**kwargs)
    with pytest.warns(UserWarning):
        got = reuters.load_data(**kwargs)
    for (x_keras, y_keras), (x_ours, y_ours) in zip(expected, got):
        assert [list(s) for s in x_keras] == [list(s) for s in x_ours]
        np.testing.assert_array_equal(y_keras, y_ours)


def test_boston_matches_keras(isolated_datasets, monkeypatch):
    from keras.src.datasets import boston_housing as keras_boston

    rng = np.random.default_rng(0)
    blob = _npz(x=rng.normal(size=(30, 13)), y=rng.uniform(5, 50, 30))
    _install(monkeypatch, isolated_datasets, "boston_housing.npz", blob, keras_boston)
    expected = keras.datasets.boston_housing.load_data(test_split=0.3, seed=2)
    with pytest.warns(UserWarning):
        got = boston_housing.load_data(test_split=0.3, seed=2)
    for keras_split, our_split in zip(expected, got):
        for keras_array, our_array in zip(keras_split, our_split):
            np.testing.assert_array_equal(keras_array, our_array)


def test_cifar100_matches_keras(isolated_datasets, monkeypatch, tmp_path):
    from keras.src.datasets import cifar100 as keras_cifar100

    monkeypatch.setenv("HOME", str(tmp_path / "user"))
    monkeypatch.setattr(cifar100, "_LOCAL_COPIES", ())
    monkeypatch.setattr(cifar100, "_SPLIT_SIZES", {"train": 4, "test": 2})
    rng = np.random.default_rng(5)
    splits = {name: {b"data": rng.integers(0, 256, (count, 3072), dtype=np.uint8),
                     b"fine_labels": rng.integers(0, 100, count).tolist(),
                     b"coarse_labels": rng.integers(0, 20, count).tolist()}
              for name, count in (("train", 4), ("test", 2))}
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for name, split in splits.items():
            blob = pickle.dumps(split, protocol=4)  # Keras refuses protocol 2 bytes (_codecs)
            info = tarfile.TarInfo(f"cifar-100-python/{name}")
            info.size = len(blob)
            archive.addfile(info, io.BytesIO(blob))
    (isolated_datasets).mkdir(parents=True, exist_ok=True)
    (isolated_datasets / "cifar-100-python.tar.gz").write_bytes(buffer.getvalue())
    extracted = tmp_path / "keras_extracted"
    with tarfile.open(fileobj=io.BytesIO(buffer.getvalue())) as archive:
        archive.extractall(extracted)
    monkeypatch.setattr(keras_cifar100, "get_file", lambda *args, **kwargs: str(extracted))
    for mode in ("fine", "coarse"):
        expected = keras.datasets.cifar100.load_data(label_mode=mode)
        with pytest.warns(UserWarning):
            got = cifar100.load_data(label_mode=mode)
        for keras_split, our_split in zip(expected, got):
            np.testing.assert_array_equal(keras_split[0], our_split[0])
            np.testing.assert_array_equal(keras_split[1], our_split[1])
