"""A CRC-32 of every weight dataset minikeras writes, checked on load.

HDF5 has no checksum on contiguous data, so a flipped byte in a weight
would load silently and be trained on. Each dataset written by minikeras
carries the attribute ``minikeras_crc32`` (of its little-endian bytes);
on load the values read are checked against it. Datasets without the
attribute (files written by Keras, or older minikeras files) load as
before. The JSON configs of a model file (architecture, training config)
get one checksum together, in the root attribute ``minikeras_config_crc32``.
"""
import zlib

import numpy

from minikeras._support.load_budget import FileLoadError

ATTRIBUTE = "minikeras_crc32"
CONFIG_ATTRIBUTE = "minikeras_config_crc32"


def _crc32(array):
    array = numpy.ascontiguousarray(array)
    if array.dtype.kind == "V":  # bfloat16 (stored as 2 opaque bytes): no buffer format, so hash the bytes
        return zlib.crc32(array.view(numpy.uint8).data) & 0xFFFFFFFF
    if array.dtype.byteorder == ">" or (array.dtype.byteorder == "=" and not numpy.little_endian):
        array = array.astype(array.dtype.newbyteorder("<"))
    return zlib.crc32(memoryview(array).cast("B")) & 0xFFFFFFFF


def store(dataset, array):
    """Record the checksum of ``array`` (the values just written) on ``dataset``."""
    stored = array if dataset.dtype.kind == "V" else numpy.asarray(array, dtype=dataset.dtype)
    dataset.attrs[ATTRIBUTE] = numpy.uint32(_crc32(stored))


def verify(dataset, value, source):
    """Raise FileLoadError when ``value`` (read from ``dataset``) does not
    match the stored checksum; a dataset without one passes."""
    try:
        expected = dataset.attrs.get(ATTRIBUTE)
    except Exception as error:  # noqa: BLE001  (a damaged attribute header)
        raise FileLoadError(f"{source}: cannot read the checksum of dataset {dataset.name!r} ({error}).") from None
    if expected is None:
        return
    if _crc32(value) != int(numpy.asarray(expected).item()):
        raise FileLoadError(
            f"{source}: dataset {dataset.name!r} fails its integrity check (CRC-32 mismatch): the file is "
            "corrupt or was modified after minikeras wrote it."
        )


def config_crc32(*texts):
    """The CRC-32 of the given JSON strings (None ones skipped), in order."""
    crc = 0
    for text in texts:
        if text is not None:
            crc = zlib.crc32(text.encode("utf8"), crc)
    return crc & 0xFFFFFFFF


def verify_configs(attributes, source, *texts):
    """Raise FileLoadError when the stored config checksum (if any) does not
    match ``texts`` as read."""
    expected = attributes.get(CONFIG_ATTRIBUTE)
    if expected is not None and int(numpy.asarray(expected).item()) != config_crc32(*texts):
        raise FileLoadError(f"{source}: its model/training config fails its integrity check (CRC-32 "
                            "mismatch): the file is corrupt or was modified after minikeras wrote it.")
