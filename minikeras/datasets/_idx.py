"""Reading IDX files, the format of MNIST and Fashion-MNIST, gzipped or not.

An IDX file is a 4-byte magic number, ``0x00 0x00 <type code> <number of
dims>``, one big-endian uint32 per dimension, then the data in C order, big
endian. MNIST's images are magic ``0x00000803`` (uint8, 3 dims: count, rows,
columns) and its labels ``0x00000801`` (uint8, 1 dim: count).

Every check that can fail raises `CorruptDatasetError`: a wrong magic number,
data shorter or longer than the dimensions promise, a gzip stream that is cut
off or fails its CRC, or a count other than the one expected.
"""
import gzip
import zlib

import numpy as np

from minikeras.datasets._errors import CorruptDatasetError

IMAGES_MAGIC = 0x00000803
LABELS_MAGIC = 0x00000801

_GZIP_SIGNATURE = b"\x1f\x8b"
# The largest data an IDX header may declare (MNIST's largest file holds
# 47 MB): a header claiming more is refused before anything is allocated.
MAX_BYTES = 2**30
_CHUNK_BYTES = 2**22
_TYPE_CODES = {
    0x08: np.dtype(np.uint8),
    0x09: np.dtype(np.int8),
    0x0B: np.dtype(">i2"),
    0x0C: np.dtype(">i4"),
    0x0D: np.dtype(">f4"),
    0x0E: np.dtype(">f8"),
}


def read_idx(path, expected_magic=None, max_bytes=MAX_BYTES) -> np.ndarray:
    """Reads a whole IDX file, gzipped (detected by its signature) or raw.

    Args:
        path: The file.
        expected_magic: When given, the magic number the file must have
            (`IMAGES_MAGIC`, `LABELS_MAGIC`).
        max_bytes: The most data the header may declare.

    Returns:
        A writable array of the file's shape, in native byte order.

    Raises:
        CorruptDatasetError: The file is truncated, corrupt or not IDX.
    """
    with open(path, "rb") as raw:
        gzipped = raw.read(2) == _GZIP_SIGNATURE
    opener = gzip.open if gzipped else open
    try:
        with opener(path, "rb") as stream:
            return _read_idx_stream(stream, expected_magic, max_bytes)
    except (OSError, EOFError, zlib.error, ValueError, MemoryError) as error:  # gzip.BadGzipFile is an OSError
        raise CorruptDatasetError(
            f"{path}: cannot be read ({type(error).__name__}: {error})") from error
    except CorruptDatasetError as error:
        raise CorruptDatasetError(f"{path}: {error}") from None


def _read_idx_stream(stream, expected_magic, max_bytes=MAX_BYTES):
    """Parses an IDX stream; raises `CorruptDatasetError` with a message that lacks the path."""
    header = _read_exactly(stream, 4, "the 4-byte magic number")
    magic = int.from_bytes(header, "big")
    if header[:2] != b"\0\0" or header[2] not in _TYPE_CODES or header[3] == 0:
        raise CorruptDatasetError(f"not an IDX file (magic number 0x{magic:08X})")
    if expected_magic is not None and magic != expected_magic:
        raise CorruptDatasetError(
            f"expected IDX magic number 0x{expected_magic:08X}, found 0x{magic:08X}")
    dtype, ndim = _TYPE_CODES[header[2]], header[3]
    shape = tuple(np.frombuffer(_read_exactly(stream, 4 * ndim, "the dimensions"), ">u4").tolist())
    nbytes = dtype.itemsize
    for size in shape:  # Python ints: the product of uint32 sizes may not fit 64 bits
        nbytes *= size
    if nbytes > max_bytes:
        raise CorruptDatasetError(
            f"its header declares shape {shape} ({nbytes} bytes of data), over the {max_bytes}-byte limit")
    # Read in bounded chunks, so memory follows the bytes the file really
    # holds, not what its header claims.
    chunks, filled = [], 0
    while filled < nbytes:
        chunk = stream.read(min(_CHUNK_BYTES, nbytes - filled))
        if not chunk:
            dims = " x ".join(map(str, shape))
            raise CorruptDatasetError(
                f"truncated: its header promises {dims} values ({nbytes} bytes of data), "
                f"the file holds only {filled}")
        chunks.append(chunk)
        filled += len(chunk)
    if stream.read(1):
        raise CorruptDatasetError(f"longer than its header promises ({nbytes} bytes of data)")
    data = np.empty(shape, dtype)
    view = memoryview(data.reshape(-1).view(np.uint8))
    offset = 0
    while chunks:
        chunk = chunks.pop(0)  # release each chunk once copied: peak stays near one copy
        view[offset:offset + len(chunk)] = chunk
        offset += len(chunk)
    return data.astype(dtype.newbyteorder("="), copy=False)


def _read_exactly(stream, size, what):
    """Reads ``size`` bytes or raises `CorruptDatasetError` naming ``what`` was cut off."""
    data = stream.read(size)
    if len(data) != size:
        raise CorruptDatasetError(f"truncated in {what}")
    return data


def read_images(path, count=None, image_shape=(28, 28)) -> np.ndarray:
    """Reads an IDX uint8 image file such as ``train-images-idx3-ubyte.gz``.

    Args:
        path: The file.
        count: The number of images it must hold, or None for any.
        image_shape: The ``(rows, columns)`` each image must have.

    Returns:
        uint8 array of shape ``(count, rows, columns)``.

    Raises:
        CorruptDatasetError: The file is not a complete IDX image file of that shape.
    """
    images = read_idx(path, IMAGES_MAGIC)
    if images.shape[1:] != tuple(image_shape) or (count is not None and len(images) != count):
        expected = ((count if count is not None else "N"),) + tuple(image_shape)
        raise CorruptDatasetError(
            f"{path}: expected images of shape {expected}, found {images.shape}")
    return images


def read_labels(path, count=None, num_classes=None) -> np.ndarray:
    """Reads an IDX uint8 label file such as ``train-labels-idx1-ubyte.gz``.

    Args:
        path: The file.
        count: The number of labels it must hold, or None for any.
        num_classes: When given, every label must be below it.

    Returns:
        uint8 array of shape ``(count,)``.

    Raises:
        CorruptDatasetError: The file is not a complete IDX label file of that length.
    """
    labels = read_idx(path, LABELS_MAGIC)
    if count is not None and len(labels) != count:
        raise CorruptDatasetError(f"{path}: expected {count} labels, found {len(labels)}")
    if num_classes is not None and labels.size and labels.max() >= num_classes:
        raise CorruptDatasetError(
            f"{path}: labels must be below {num_classes}, found {labels.max()}")
    return labels
