"""bfloat16 arrays in HDF5 files. HDF5 has no bfloat16 type, so, as Keras
3 does, a bfloat16 array is stored as opaque 2-byte values with the dataset
attribute ``dtype="bfloat16"``, and read back as bfloat16 only where that
marker is present (other opaque data is refused by the safety checks)."""
import numpy

from minikeras.backend.dtypes import bfloat16

MARKER = "dtype"


def create_dataset(group, name, array):
    """``group.create_dataset(name, data=array)``, marked when bfloat16."""
    array = numpy.asarray(array)
    dataset = group.create_dataset(name, data=array)
    if array.dtype == bfloat16():
        dataset.attrs[MARKER] = "bfloat16"
    return dataset


def is_bfloat16_dataset(dataset):
    """True for a dataset of 2-byte opaque values marked ``dtype="bfloat16"``."""
    try:
        if dataset.dtype.kind != "V" or dataset.dtype.itemsize != 2 or dataset.dtype.names is not None:
            return False
        marker = dataset.attrs.get(MARKER)
    except Exception:  # noqa: BLE001  (a damaged header is reported by the safety checks)
        return False
    return (marker.decode("utf8") if isinstance(marker, bytes) else marker) == "bfloat16"


def as_read(dataset, value):
    """``value`` read from ``dataset``, as bfloat16 when the dataset is marked so."""
    return value.view(bfloat16()) if is_bfloat16_dataset(dataset) else value
