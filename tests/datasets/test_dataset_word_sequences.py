"""IMDB and Reuters: Keras's npz files (ragged object arrays) read without
allow_pickle, with Keras's shuffling, offsets, maxlen and vocabulary limits."""
import io
import pickle

import numpy as np
import pytest

from minikeras.datasets import CorruptDatasetError, DatasetNotFoundError, imdb, reuters


@pytest.fixture(autouse=True)
def no_keras_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "user"))  # no real ~/.keras copy is found


def _ragged(lists):
    array = np.empty(len(lists), dtype=object)
    for index, values in enumerate(lists):
        array[index] = list(values)
    return array


def _npz(**arrays):
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)  # object arrays are pickled, as in Keras's files
    return buffer.getvalue()


TRAIN = [[1, 2, 3], [4, 5], [6, 7, 8, 9, 10], [11]]
TEST = [[2, 2], [12, 1, 3], [5]]


def _imdb_file(cache, name="imdb.npz"):
    path = cache / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(_npz(x_train=_ragged(TRAIN), y_train=np.array([0, 1, 0, 1]),
                          x_test=_ragged(TEST), y_test=np.array([1, 0, 1])))
    return path


def _expected_imdb(seed=113, start_char=1, index_from=3):
    # Keras's order: one RandomState shuffles train, then test.
    rng = np.random.RandomState(seed)
    train_order = np.arange(4)
    rng.shuffle(train_order)
    test_order = np.arange(3)
    rng.shuffle(test_order)
    prefix = [] if start_char is None else [start_char]
    train = [prefix + [w + index_from for w in TRAIN[i]] for i in train_order]
    test = [prefix + [w + index_from for w in TEST[i]] for i in test_order]
    return train, np.array([0, 1, 0, 1])[train_order], test, np.array([1, 0, 1])[test_order]


def test_imdb_default_arguments(isolated_datasets):
    _imdb_file(isolated_datasets)
    with pytest.warns(UserWarning, match="not the published file"):
        (x_train, y_train), (x_test, y_test) = imdb.load_data()
    train, train_labels, test, test_labels = _expected_imdb()
    assert x_train.dtype == object and x_train.shape == (4,)
    # Default num_words is the largest id, which (as in Keras) itself becomes oov_char.
    largest = max(max(s) for s in train + test)
    assert list(x_train) == [[w if w < largest else 2 for w in s] for s in train]
    assert list(x_test) == [[w if w < largest else 2 for w in s] for s in test]
    np.testing.assert_array_equal(y_train, train_labels)
    np.testing.assert_array_equal(y_test, test_labels)


def test_imdb_num_words_skip_top_oov_and_maxlen(isolated_datasets):
    _imdb_file(isolated_datasets)
    with pytest.warns(UserWarning):
        (x_train, _), (x_test, y_test) = imdb.load_data(num_words=8, skip_top=2, maxlen=4, seed=1)
    train, _, test, test_labels = _expected_imdb(seed=1)
    keep_train = [s for s in train if len(s) < 4]
    keep = [i for i, s in enumerate(test) if len(s) < 4]
    assert list(x_train) == [[w if 2 <= w < 8 else 2 for w in s] for s in keep_train]
    assert list(x_test) == [[w if 2 <= w < 8 else 2 for w in test[i]] for i in keep]
    np.testing.assert_array_equal(y_test, test_labels[keep])


def test_imdb_oov_none_drops_words_and_no_start_char(isolated_datasets):
    _imdb_file(isolated_datasets)
    with pytest.warns(UserWarning):
        (x_train, _), _ = imdb.load_data(num_words=6, oov_char=None, start_char=None, index_from=0)
    train, _, _, _ = _expected_imdb(start_char=None, index_from=0)
    assert list(x_train) == [[w for w in s if w < 6] for s in train]


def test_imdb_equal_length_reviews_stay_a_1d_array_of_lists(isolated_datasets):
    path = isolated_datasets / "imdb.npz"
    path.parent.mkdir(parents=True)
    path.write_bytes(_npz(x_train=_ragged([[1, 2], [3, 4]]), y_train=np.array([0, 1]),
                          x_test=_ragged([[5, 6]]), y_test=np.array([1])))
    with pytest.warns(UserWarning):
        (x_train, _), _ = imdb.load_data()
    assert x_train.shape == (2,) and isinstance(x_train[0], list)


def test_imdb_maxlen_that_keeps_nothing(isolated_datasets):
    _imdb_file(isolated_datasets)
    with pytest.warns(UserWarning), pytest.raises(ValueError, match="maxlen"):
        imdb.load_data(maxlen=1)


def test_imdb_offline_says_where_to_put_it(isolated_datasets):
    with pytest.raises(DatasetNotFoundError, match="imdb.npz") as error:
        imdb.load_data()
    assert str(isolated_datasets / "imdb.npz") in str(error.value)


def test_imdb_download_is_checked(isolated_datasets, downloads, monkeypatch, build):
    blob = _npz(x_train=_ragged(TRAIN), y_train=np.array([0, 1, 0, 1]),
                x_test=_ragged(TEST), y_test=np.array([1, 0, 1]))
    downloads.serve(imdb._URL, blob)
    monkeypatch.setattr(imdb, "_SHA256", build.sha256(blob))
    (x_train, _), _ = imdb.load_data(num_words=100)
    assert len(x_train) == 4 and (isolated_datasets / "imdb.npz").is_file()


class _Exploit:
    def __reduce__(self):
        import os
        return (os.system, ("echo pwned",))


def test_a_malicious_pickle_is_refused_not_run(isolated_datasets, monkeypatch):
    payload = np.empty(1, dtype=object)
    payload[0] = _Exploit()
    path = isolated_datasets / "imdb.npz"
    path.parent.mkdir(parents=True)
    path.write_bytes(_npz(x_train=payload, y_train=np.array([0]), x_test=_ragged([[1]]), y_test=np.array([1])))
    assert b"system" in path.read_bytes() or b"posix" in path.read_bytes()  # the file does name it
    ran = []
    monkeypatch.setattr("os.system", lambda command: ran.append(command))
    with pytest.warns(UserWarning, match="unusable"), pytest.raises(DatasetNotFoundError):
        imdb.load_data()
    assert ran == []


@pytest.mark.parametrize("arrays, message", [
    ({"x_train": _ragged([[1]]), "y_train": np.array([0])}, "no array 'x_test'"),
    ({"x_train": _ragged([["a"]]), "y_train": np.array([0]), "x_test": _ragged([[1]]),
      "y_test": np.array([0])}, "integer word ids"),
    ({"x_train": _ragged([[1]]), "y_train": np.array([0, 1]), "x_test": _ragged([[1]]),
      "y_test": np.array([0])}, "1 integer labels"),
])
def test_malformed_files(tmp_path, arrays, message):
    path = tmp_path / "bad.npz"
    path.write_bytes(_npz(**arrays))
    with pytest.raises(CorruptDatasetError, match=message):
        imdb._read(path)


def test_not_a_zip(tmp_path):
    path = tmp_path / "bad.npz"
    path.write_bytes(b"not a zip")
    with pytest.raises(CorruptDatasetError, match="not a complete .npz"):
        imdb._read(path)


def test_imdb_bad_arguments():
    with pytest.raises(ValueError, match="num_words"):
        imdb.load_data(num_words=0)
    with pytest.raises(ValueError, match="skip_top"):
        imdb.load_data(skip_top=-1)


def _reuters_file(cache, count=10):
    rng = np.random.default_rng(0)
    lists = [rng.integers(1, 30, rng.integers(1, 8)).tolist() for _ in range(count)]
    path = cache / "reuters.npz"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(_npz(x=_ragged(lists), y=np.arange(count) % 46))
    return lists


def test_reuters_split_and_shuffle_like_keras(isolated_datasets):
    lists = _reuters_file(isolated_datasets)
    with pytest.warns(UserWarning):
        (x_train, y_train), (x_test, y_test) = reuters.load_data(num_words=20, test_split=0.3, seed=5)
    order = np.arange(10)
    np.random.RandomState(5).shuffle(order)
    expected = [[1] + [w + 3 if w + 3 < 20 else 2 for w in lists[i]] for i in order]
    assert len(x_train) == 7 and len(x_test) == 3
    assert list(x_train) + list(x_test) == expected
    np.testing.assert_array_equal(np.concatenate([y_train, y_test]), (np.arange(10) % 46)[order])


def test_reuters_bad_test_split():
    with pytest.raises(ValueError, match="test_split"):
        reuters.load_data(test_split=1.0)


@pytest.mark.parametrize("module, name", [(imdb, "imdb_word_index.json"), (reuters, "reuters_word_index.json")])
def test_word_index(isolated_datasets, module, name):
    path = isolated_datasets / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text('{"the": 1, "and": 2}')
    with pytest.warns(UserWarning, match="not the published file"):
        assert module.get_word_index() == {"the": 1, "and": 2}
    path.write_text('["not", "a", "dict"]')
    with pytest.warns(UserWarning, match="unusable"), pytest.raises(DatasetNotFoundError):
        module.get_word_index()


def test_pickle_protocols(tmp_path):
    # numpy writes object arrays with the protocol of the NumPy that saved them.
    from minikeras.datasets import _safe_pickle

    array = _ragged([[1, 2], [3]])
    for protocol in (2, 3, 4, 5):
        restored = _safe_pickle.loads(pickle.dumps(array, protocol=protocol))
        assert list(restored) == [[1, 2], [3]]


def test_oversized_member_is_refused_before_reading(tmp_path, monkeypatch):
    from minikeras.datasets import _npz as npz_reader

    path = tmp_path / "big.npz"
    path.write_bytes(_npz(x=_ragged([[1] * 5000]), y=np.array([0])))
    monkeypatch.setattr(npz_reader, "MAX_MEMBER_BYTES", 1000)
    with pytest.raises(CorruptDatasetError, match="over the 1000-byte limit"):
        reuters._read(path)


def test_numeric_header_promising_more_than_the_member_holds(tmp_path):
    import zipfile

    from numpy.lib import format as npy_format

    header = io.BytesIO()
    npy_format.write_array_header_1_0(header, {"descr": "<f8", "fortran_order": False,
                                               "shape": (2**40, 13)})
    path = tmp_path / "bomb.npz"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("x.npy", header.getvalue() + b"\0" * 64)
        archive.writestr("y.npy", header.getvalue())
    from minikeras.datasets import boston_housing

    with pytest.raises(CorruptDatasetError, match="declares shape"):
        boston_housing._read(path)
