"""Tests for minikeras/datasets/_idx.py: IDX parsing, gzipped or raw, and its checks."""
import gzip

import numpy as np
import pytest

from minikeras.datasets import CorruptDatasetError, _idx


@pytest.mark.parametrize("gzipped", [True, False])
def test_reads_images_and_labels(build, tmp_path, gzipped):
    images, labels = build.random_images(5), build.random_labels(5)
    images_path = build.write(tmp_path / "images", build.idx_bytes(images, gzipped=gzipped))
    labels_path = build.write(tmp_path / "labels", build.idx_bytes(labels, gzipped=gzipped))

    read_images = _idx.read_images(images_path, count=5)
    read_labels = _idx.read_labels(labels_path, count=5, num_classes=10)

    assert read_images.dtype == np.uint8 and read_images.shape == (5, 28, 28)
    assert read_labels.dtype == np.uint8 and read_labels.shape == (5,)
    np.testing.assert_array_equal(read_images, images)
    np.testing.assert_array_equal(read_labels, labels)
    read_images[0, 0, 0] = 7  # a writable array, as Keras returns
    assert read_images.flags.c_contiguous


def test_header_is_big_endian(build, tmp_path):
    images = build.random_images(2, shape=(3, 4))
    raw = build.idx_bytes(images, gzipped=False)
    assert raw[:16] == bytes.fromhex("00000803" "00000002" "00000003" "00000004")
    path = build.write(tmp_path / "f", raw)
    np.testing.assert_array_equal(_idx.read_images(path, image_shape=(3, 4)), images)


def test_other_element_types_come_back_in_native_byte_order(build, tmp_path):
    values = np.arange(-6, 6, dtype=np.int32).reshape(3, 4) * 1000003
    path = build.write(tmp_path / "f", build.idx_bytes(values, magic_type=0x0C))
    result = _idx.read_idx(path)
    assert result.dtype == np.dtype(np.int32) and result.dtype.isnative
    np.testing.assert_array_equal(result, values)


def test_truncated_raw_file(build, tmp_path):
    raw = build.idx_bytes(build.random_images(4), gzipped=False)
    path = build.write(tmp_path / "train-images-idx3-ubyte", raw[:-100])
    with pytest.raises(CorruptDatasetError, match=r"truncated: .*4 x 28 x 28.*3136 bytes.*3036"):
        _idx.read_images(path)


def test_truncated_gzip_file(build, tmp_path):
    data = build.idx_bytes(build.random_images(40))
    path = build.write(tmp_path / "train-images-idx3-ubyte.gz", data[: len(data) // 2])
    with pytest.raises(CorruptDatasetError, match="train-images-idx3-ubyte.gz.*cannot be read"):
        _idx.read_images(path)


def test_gzip_of_a_truncated_idx(build, tmp_path):
    raw = build.idx_bytes(build.random_labels(30), gzipped=False)
    path = build.write(tmp_path / "labels.gz", gzip.compress(raw[:20]))
    with pytest.raises(CorruptDatasetError, match="truncated"):
        _idx.read_labels(path)


def test_gzip_with_a_bad_crc(build, tmp_path):
    data = bytearray(build.idx_bytes(build.random_labels(30)))
    data[-6] ^= 0xFF  # inside the CRC32 trailer
    path = build.write(tmp_path / "labels.gz", bytes(data))
    with pytest.raises(CorruptDatasetError, match="cannot be read"):
        _idx.read_labels(path)


def test_truncated_header(build, tmp_path):
    path = build.write(tmp_path / "f", bytes.fromhex("00000803000000"))
    with pytest.raises(CorruptDatasetError, match="truncated in the dimensions"):
        _idx.read_images(path)


def test_trailing_bytes(build, tmp_path):
    raw = build.idx_bytes(build.random_labels(3), gzipped=False)
    path = build.write(tmp_path / "f", raw + b"\0")
    with pytest.raises(CorruptDatasetError, match="longer than its header"):
        _idx.read_labels(path)


def test_labels_are_not_images(build, tmp_path):
    path = build.write(tmp_path / "f", build.idx_bytes(build.random_labels(3)))
    with pytest.raises(CorruptDatasetError, match="expected IDX magic number 0x00000803, found 0x00000801"):
        _idx.read_images(path)


def test_not_an_idx_file(build, tmp_path):
    path = build.write(tmp_path / "f", b"<html>404 Not Found</html>")
    with pytest.raises(CorruptDatasetError, match="not an IDX file"):
        _idx.read_idx(path)


def test_wrong_count_and_shape(build, tmp_path):
    images = build.write(tmp_path / "i", build.idx_bytes(build.random_images(3, shape=(28, 27))))
    labels = build.write(tmp_path / "l", build.idx_bytes(build.random_labels(3)))
    with pytest.raises(CorruptDatasetError, match=r"expected images of shape \('N', 28, 28\)"):
        _idx.read_images(images)
    with pytest.raises(CorruptDatasetError, match="expected 4 labels, found 3"):
        _idx.read_labels(labels, count=4)


def test_label_out_of_range(build, tmp_path):
    path = build.write(tmp_path / "l", build.idx_bytes(np.array([1, 2, 10], np.uint8)))
    with pytest.raises(CorruptDatasetError, match="below 10, found 10"):
        _idx.read_labels(path, num_classes=10)


@pytest.mark.parametrize("gzipped", [True, False])
def test_header_declaring_more_than_max_bytes_is_refused_before_allocating(build, tmp_path, gzipped):
    header = bytes([0, 0, 8, 3]) + b"".join(size.to_bytes(4, "big") for size in (2**31, 2**31, 2**31))
    raw = header + bytes(100)
    path = build.write(tmp_path / "f", gzip.compress(raw) if gzipped else raw)
    with pytest.raises(CorruptDatasetError, match=r"declares shape \(2147483648, 2147483648, 2147483648\).*limit"):
        _idx.read_idx(path)
    small = build.write(tmp_path / "g", build.idx_bytes(build.random_images(3), gzipped=gzipped))
    with pytest.raises(CorruptDatasetError, match="over the 100-byte limit"):
        _idx.read_idx(small, max_bytes=100)
