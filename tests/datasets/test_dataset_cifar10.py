"""Tests for minikeras/datasets/cifar10.py: the python-pickle batches inside the tar.gz."""
import os
import pickle

import numpy as np
import pytest

from minikeras.datasets import CorruptDatasetError, DatasetNotFoundError, cifar10

TRAIN_SIZES = (3, 2, 4, 1, 2)
TEST_SIZE = 3


@pytest.fixture
def small_cifar(monkeypatch, build):
    """Shrinks CIFAR-10 to 12 training and 3 test images; returns the batches and tar bytes."""
    monkeypatch.setattr(cifar10, "_SPLIT_SIZES", {"train": sum(TRAIN_SIZES), "test": TEST_SIZE})
    batches = build.cifar_batches(TRAIN_SIZES, TEST_SIZE)
    return batches, build.cifar_tar_bytes(batches)


def expected_split(batches, names):
    data = np.concatenate([batches[name][b"data"] for name in names])
    labels = np.concatenate([batches[name][b"labels"] for name in names]).astype(np.uint8)
    return data, labels


def assert_loaded(result, batches):
    (x_train, y_train), (x_test, y_test) = result
    assert x_train.shape == (12, 32, 32, 3) and y_train.shape == (12, 1)
    assert x_test.shape == (3, 32, 32, 3) and y_test.shape == (3, 1)
    assert x_train.dtype == y_train.dtype == x_test.dtype == y_test.dtype == np.uint8
    train_names = [f"data_batch_{number}" for number in range(1, 6)]
    for (images, labels), names in (((x_train, y_train), train_names), ((x_test, y_test), ["test_batch"])):
        data, expected_labels = expected_split(batches, names)
        np.testing.assert_array_equal(labels[:, 0], expected_labels)
        # Row layout: 1024 red, 1024 green, 1024 blue, each row-major 32 x 32.
        for index, row, column, channel in [(0, 0, 0, 0), (1, 5, 7, 1), (2, 31, 30, 2), (-1, 12, 0, 2)]:
            assert images[index, row, column, channel] == data[index, channel * 1024 + row * 32 + column]
        np.testing.assert_array_equal(images, data.reshape(-1, 3, 32, 32).transpose(0, 2, 3, 1))
    assert x_train.flags.c_contiguous


def test_loads_cached_archive_matching_the_checksum(small_cifar, build, isolated_datasets,
                                                    monkeypatch, downloads):
    batches, data = small_cifar
    build.write(isolated_datasets / "cifar-10-python.tar.gz", data)
    monkeypatch.setattr(cifar10, "_MD5", build.md5(data))
    assert_loaded(cifar10.load_data(), batches)
    assert downloads.calls == []


def test_rebuilt_archive_is_used_with_a_warning(small_cifar, build, isolated_datasets):
    """An archive rebuilt from other sources (make_cifar10.py) is complete but not the published bytes."""
    batches, data = small_cifar
    build.write(isolated_datasets / "cifar-10-python.tar.gz", data)
    with pytest.warns(UserWarning, match="c58f30108f718f92721af3b95e74349a.*complete and well formed"):
        assert_loaded(cifar10.load_data(), batches)


def test_plain_tar_and_dot_slash_names(small_cifar, build, tmp_path):
    batches, _ = small_cifar
    path = build.write(tmp_path / "c.tar", build.cifar_tar_bytes(
        batches, folder="./cifar-10-batches-py", compression=""))
    assert_loaded(cifar10.read_archive(path), batches)


def test_download_verifies_and_caches(small_cifar, build, isolated_datasets, monkeypatch, downloads):
    batches, data = small_cifar
    monkeypatch.setattr(cifar10, "_MD5", build.md5(data))
    downloads.serve("https://www.cs.toronto.edu/~kriz/cifar-10-python.tar.gz", data)
    assert_loaded(cifar10.load_data(), batches)
    assert (isolated_datasets / "cifar-10-python.tar.gz").read_bytes() == data


def test_download_with_wrong_checksum_leaves_nothing(small_cifar, isolated_datasets, downloads):
    _, data = small_cifar
    downloads.serve(cifar10._URL, data)
    with pytest.raises(CorruptDatasetError, match="md5 is .*published file's is c58f30108f718f92721af3b95e74349a"):
        cifar10.load_data()
    assert list(isolated_datasets.iterdir()) == []


def test_truncated_cached_archive_is_downloaded_again(small_cifar, build, isolated_datasets,
                                                      monkeypatch, downloads):
    batches, data = small_cifar
    cached = build.write(isolated_datasets / "cifar-10-python.tar.gz", data[: len(data) * 2 // 3])
    monkeypatch.setattr(cifar10, "_MD5", build.md5(data))
    downloads.serve(cifar10._URL, data)
    with pytest.warns(UserWarning, match="not a complete tar archive"):
        assert_loaded(cifar10.load_data(), batches)
    assert cached.read_bytes() == data


@pytest.mark.parametrize("cut", [0.1, 0.5, 0.9, 0.999])
def test_truncated_archive(small_cifar, build, tmp_path, cut):
    _, data = small_cifar
    path = build.write(tmp_path / "c.tar.gz", data[: int(len(data) * cut)])
    with pytest.raises(CorruptDatasetError, match="c.tar.gz"):
        cifar10.read_archive(path)


def test_offline_names_the_file_and_where_to_put_it(isolated_datasets):
    with pytest.raises(DatasetNotFoundError) as raised:
        cifar10.load_data()
    message = str(raised.value)
    assert "CIFAR-10 file 'cifar-10-python.tar.gz'" in message
    assert str(isolated_datasets / "cifar-10-python.tar.gz") in message
    assert "https://www.cs.toronto.edu/~kriz/cifar-10-python.tar.gz" in message
    assert "md5 c58f30108f718f92721af3b95e74349a" in message


def test_missing_batch(small_cifar, build, tmp_path):
    batches, _ = small_cifar
    del batches["data_batch_3"]
    path = build.write(tmp_path / "c.tar.gz", build.cifar_tar_bytes(batches))
    with pytest.raises(CorruptDatasetError, match="has no cifar-10-batches-py/data_batch_3"):
        cifar10.read_archive(path)


def test_batches_outside_the_folder_do_not_count(small_cifar, build, tmp_path):
    batches, _ = small_cifar
    path = build.write(tmp_path / "c.tar.gz", build.cifar_tar_bytes(batches, folder="other"))
    with pytest.raises(CorruptDatasetError, match="has no"):
        cifar10.read_archive(path)


def test_wrong_counts(small_cifar, build, tmp_path, monkeypatch):
    _, data = small_cifar
    monkeypatch.setattr(cifar10, "_SPLIT_SIZES", {"train": 50000, "test": TEST_SIZE})
    path = build.write(tmp_path / "c.tar.gz", data)
    with pytest.raises(CorruptDatasetError, match="expected 50000 train images, found 12"):
        cifar10.read_archive(path)


@pytest.mark.parametrize("damage, message", [
    (lambda batch: batch.pop(b"labels"), "no b'labels' entry"),
    (lambda batch: batch.update({b"data": batch[b"data"][:, :3000]}), r"uint8 of shape \(N, 3072\)"),
    (lambda batch: batch.update({b"data": batch[b"data"].astype(np.int16)}), "found int16"),
    (lambda batch: batch.update({b"labels": batch[b"labels"][:-1]}), "3 images but 2 labels"),
    (lambda batch: batch.update({b"labels": [0, 1, 10]}), "labels must be 0-9"),
])
def test_malformed_batch(small_cifar, build, tmp_path, damage, message):
    batches, _ = small_cifar
    damage(batches["test_batch"])
    path = build.write(tmp_path / "c.tar.gz", build.cifar_tar_bytes(batches))
    with pytest.raises(CorruptDatasetError, match=f"test_batch.*{message}"):
        cifar10.read_archive(path)


def test_garbage_batch(small_cifar, build, tmp_path):
    batches, _ = small_cifar
    batches["data_batch_2"] = b"\x80\x02not a pickle at all"
    path = build.write(tmp_path / "c.tar.gz", build.cifar_tar_bytes(batches))
    with pytest.raises(CorruptDatasetError, match="data_batch_2 is not a readable batch"):
        cifar10.read_archive(path)


class _Exploit:
    def __reduce__(self):
        return (os.system, ("echo pwned",))


def test_pickle_cannot_run_code(small_cifar, build, tmp_path):
    batches, _ = small_cifar
    batches["data_batch_1"] = pickle.dumps({b"data": _Exploit(), b"labels": []}, protocol=2)
    path = build.write(tmp_path / "c.tar.gz", build.cifar_tar_bytes(batches))
    with pytest.raises(CorruptDatasetError, match="refusing to load (posix|os|nt).system"):
        cifar10.read_archive(path)


def test_reads_pickles_of_every_protocol(small_cifar, build, tmp_path):
    batches, _ = small_cifar
    packed = {name: pickle.dumps(batch, protocol=protocol)
              for (name, batch), protocol in zip(batches.items(), [0, 1, 2, 3, 4, 5, 2])}
    path = build.write(tmp_path / "c.tar.gz", build.cifar_tar_bytes(packed))
    assert_loaded(cifar10.read_archive(path), batches)


def python2_pickle(batch):
    """Assembles, opcode by opcode, the pickle Python 2 and NumPy 1 wrote for the release.

    Python 3 cannot write it: Python 2 stored bytes as ``str`` (SHORT_BINSTRING),
    which is why the batches must be read with ``encoding="bytes"``.
    """
    def text(value):
        return b"U" + bytes([len(value)]) + value

    data = batch[b"data"]
    assert data.shape[0] < 256
    dtype = (b"cnumpy\ndtype\n" + text(b"u1") + b"K\x00K\x01\x87R(K\x03" + text(b"|")
             + b"NNNJ\xff\xff\xff\xffJ\xff\xff\xff\xffK\x00tb")
    raw = data.tobytes()
    array = (b"cnumpy.core.multiarray\n_reconstruct\ncnumpy\nndarray\nK\x00\x85" + text(b"b") + b"\x87R"
             + b"(K\x01" + b"K" + bytes([data.shape[0]]) + b"M\x00\x0c\x86" + dtype
             + b"\x89T" + len(raw).to_bytes(4, "little") + raw + b"tb")
    labels = b"](" + b"".join(b"K" + bytes([label]) for label in batch[b"labels"]) + b"e"
    return (b"\x80\x02}(" + text(b"batch_label") + text(batch[b"batch_label"])
            + text(b"data") + array + text(b"labels") + labels + b"u.")


def test_reads_python2_pickles_like_the_release(small_cifar, build, tmp_path):
    batches, _ = small_cifar
    packed = {name: python2_pickle(batch) for name, batch in batches.items() if name != "batches.meta"}
    path = build.write(tmp_path / "c.tar.gz", build.cifar_tar_bytes(packed))
    assert_loaded(cifar10.read_archive(path), batches)


REAL_ARCHIVE = os.path.join(os.path.expanduser("~"), ".minikeras", "datasets", "cifar-10-python.tar.gz")


@pytest.mark.slow
@pytest.mark.skipif(not os.path.isfile(REAL_ARCHIVE), reason="no CIFAR-10 archive in ~/.minikeras/datasets")
def test_real_archive():
    (x_train, y_train), (x_test, y_test) = cifar10.read_archive(REAL_ARCHIVE)
    assert x_train.shape == (50000, 32, 32, 3) and y_train.shape == (50000, 1)
    assert x_test.shape == (10000, 32, 32, 3) and y_test.shape == (10000, 1)
    np.testing.assert_array_equal(np.bincount(y_train[:, 0]), [5000] * 10)
    np.testing.assert_array_equal(np.bincount(y_test[:, 0]), [1000] * 10)


def test_member_declaring_more_than_a_batch_is_refused_before_reading(tmp_path):
    import gzip
    import tarfile

    info = tarfile.TarInfo("cifar-10-batches-py/data_batch_1")
    info.size = 2**33
    path = tmp_path / "c.tar.gz"
    path.write_bytes(gzip.compress(info.tobuf(format=tarfile.GNU_FORMAT) + bytes(2048)))
    with pytest.raises(CorruptDatasetError, match="data_batch_1 declares 8589934592 bytes"):
        cifar10.read_archive(path)
