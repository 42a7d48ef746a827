"""Tests for minikeras/datasets/fashion_mnist.py: four IDX files, cache, local copies, mirrors."""
import os
import warnings

import numpy as np
import pytest

from minikeras.datasets import DatasetNotFoundError, fashion_mnist

NAMES = {
    "x_train": "train-images-idx3-ubyte.gz", "y_train": "train-labels-idx1-ubyte.gz",
    "x_test": "t10k-images-idx3-ubyte.gz", "y_test": "t10k-labels-idx1-ubyte.gz",
}
DEBIAN_DIR = "/usr/share/datasets/fashion-mnist"


@pytest.fixture
def small_fashion(monkeypatch, build):
    """Shrinks Fashion-MNIST to 6 training and 4 test images; returns arrays and file bytes."""
    monkeypatch.setattr(fashion_mnist, "_SPLIT_SIZES", {"train": 6, "test": 4})
    arrays = build.mnist_arrays(train=6, test=4)
    files = {NAMES[key]: build.idx_bytes(array) for key, array in arrays.items()}
    return arrays, files


def assert_loaded(result, arrays):
    (x_train, y_train), (x_test, y_test) = result
    assert x_train.shape == (6, 28, 28) and y_train.shape == (6,)
    assert x_test.shape == (4, 28, 28) and y_test.shape == (4,)
    for name, array in zip(NAMES, (x_train, y_train, x_test, y_test)):
        assert array.dtype == np.uint8
        np.testing.assert_array_equal(array, arrays[name])


def test_loads_from_the_cache(small_fashion, build, isolated_datasets, monkeypatch, downloads):
    arrays, files = small_fashion
    for name, data in files.items():
        build.write(isolated_datasets / "fashion-mnist" / name, data)
    monkeypatch.setattr(fashion_mnist, "_MD5", {name: build.md5(data) for name, data in files.items()})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert_loaded(fashion_mnist.load_data(), arrays)
    assert downloads.calls == []


def test_local_copies_gzipped_or_not(small_fashion, build, tmp_path, monkeypatch, downloads):
    arrays, files = small_fashion
    system = tmp_path / "usr-share"
    for key, name in NAMES.items():
        if key.startswith("x"):
            build.write(system / name, files[name])
        else:  # labels stored uncompressed
            build.write(system / name[:-3], build.idx_bytes(arrays[key], gzipped=False))
    monkeypatch.setattr(fashion_mnist, "_LOCAL_DIRS", (str(system),))
    assert_loaded(fashion_mnist.load_data(), arrays)
    assert downloads.calls == []


def test_downloads_from_keras_mirror_then_zalando(small_fashion, build, isolated_datasets,
                                                  monkeypatch, downloads):
    arrays, files = small_fashion
    monkeypatch.setattr(fashion_mnist, "_MD5", {name: build.md5(data) for name, data in files.items()})
    keras, zalando = fashion_mnist._BASE_URLS
    for name, data in files.items():
        # The Keras mirror has only the training files; Zalando has them all.
        if name.startswith("train"):
            downloads.serve(keras + name, data)
        downloads.serve(zalando + name, data)
    assert_loaded(fashion_mnist.load_data(), arrays)
    assert downloads.calls == [
        keras + "train-images-idx3-ubyte.gz", keras + "train-labels-idx1-ubyte.gz",
        keras + "t10k-images-idx3-ubyte.gz", zalando + "t10k-images-idx3-ubyte.gz",
        keras + "t10k-labels-idx1-ubyte.gz", zalando + "t10k-labels-idx1-ubyte.gz",
    ]
    for name, data in files.items():
        assert (isolated_datasets / "fashion-mnist" / name).read_bytes() == data


def test_truncated_cached_file_is_downloaded_again(small_fashion, build, isolated_datasets,
                                                    monkeypatch, downloads):
    arrays, files = small_fashion
    folder = isolated_datasets / "fashion-mnist"
    for name, data in files.items():
        build.write(folder / name, data)
    broken = "t10k-images-idx3-ubyte.gz"
    build.write(folder / broken, files[broken][:-40])
    monkeypatch.setattr(fashion_mnist, "_MD5", {name: build.md5(data) for name, data in files.items()})
    downloads.serve(fashion_mnist._BASE_URLS[0] + broken, files[broken])
    with pytest.warns(UserWarning, match=f"{broken} is unusable"):
        assert_loaded(fashion_mnist.load_data(), arrays)
    assert (folder / broken).read_bytes() == files[broken]
    assert downloads.calls == [fashion_mnist._BASE_URLS[0] + broken]


def test_offline_names_file_folder_and_urls(isolated_datasets):
    with pytest.raises(DatasetNotFoundError) as raised:
        fashion_mnist.load_data()
    message = str(raised.value)
    assert "Fashion-MNIST file 'train-images-idx3-ubyte.gz'" in message
    assert str(isolated_datasets / "fashion-mnist" / "train-images-idx3-ubyte.gz") in message
    assert "https://storage.googleapis.com/tensorflow/tf-keras-datasets/train-images-idx3-ubyte.gz" in message
    assert "http://fashion-mnist.s3-website.eu-central-1.amazonaws.com/train-images-idx3-ubyte.gz" in message
    assert "md5 8d4fb7e6c68d591d4c3dfef9ec88bf0d" in message
    assert "t10k-labels-idx1-ubyte.gz" in message  # the other files it needs


def test_known_checksums_are_zalandos():
    assert fashion_mnist._MD5 == {
        "train-images-idx3-ubyte.gz": "8d4fb7e6c68d591d4c3dfef9ec88bf0d",
        "train-labels-idx1-ubyte.gz": "25c81989df183df01b3e8a0aad5dffbe",
        "t10k-images-idx3-ubyte.gz": "bef4ecab320f06d8554ea6380940ec79",
        "t10k-labels-idx1-ubyte.gz": "bb300cfdad3c16e7a12a480ee83cd310",
    }


@pytest.mark.skipif(not os.path.isdir(DEBIAN_DIR), reason="Debian's dataset-fashion-mnist is not installed")
def test_debian_package_copy(monkeypatch, downloads):
    monkeypatch.setattr(fashion_mnist, "_LOCAL_DIRS", (DEBIAN_DIR,))
    (x_train, y_train), (x_test, y_test) = fashion_mnist.load_data()
    assert x_train.shape == (60000, 28, 28) and y_train.shape == (60000,)
    assert x_test.shape == (10000, 28, 28) and y_test.shape == (10000,)
    assert x_train.dtype == y_train.dtype == np.uint8
    np.testing.assert_array_equal(np.bincount(y_train), [6000] * 10)
    np.testing.assert_array_equal(np.bincount(y_test), [1000] * 10)
    assert downloads.calls == []


def test_cached_file_with_an_absurd_header_is_downloaded_again(small_fashion, build, isolated_datasets,
                                                               monkeypatch, downloads):
    # The header claims 4 TiB of images: refused before allocating, then the
    # documented fallback (a new download) happens.
    arrays, files = small_fashion
    folder = isolated_datasets / "fashion-mnist"
    for name, data in files.items():
        build.write(folder / name, data)
    broken = "train-images-idx3-ubyte.gz"
    header = bytes([0, 0, 8, 3]) + b"".join(size.to_bytes(4, "big") for size in (2**20, 2**12, 2**10))
    build.write(folder / broken, header + bytes(1000))
    monkeypatch.setattr(fashion_mnist, "_MD5", {name: build.md5(data) for name, data in files.items()})
    downloads.serve(fashion_mnist._BASE_URLS[0] + broken, files[broken])
    with pytest.warns(UserWarning, match=f"{broken} is unusable.*over the 1073741824-byte limit"):
        assert_loaded(fashion_mnist.load_data(), arrays)
    assert (folder / broken).read_bytes() == files[broken]
