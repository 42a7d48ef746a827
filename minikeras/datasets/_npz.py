"""Reading ``.npz`` archives without ``allow_pickle``.

Numeric arrays are read by NumPy with pickles refused; object arrays (the
ragged sequences of Keras's IMDB and Reuters files) are rebuilt with
`_safe_pickle.RestrictedUnpickler`, which allows nothing but NumPy's own
array reconstruction.
"""
import io
import zipfile
import zlib

import numpy
from numpy.lib import format as npy_format

from minikeras.datasets import _safe_pickle
from minikeras.datasets._errors import CorruptDatasetError


def read_npz(path, keys):
    """Returns ``{key: array}`` for each of ``keys`` in the ``.npz`` at ``path``.

    Raises:
        CorruptDatasetError: not a zip, a key missing, or a member that is
            not a well-formed ``.npy`` array (or an object array holding
            anything but plain values).
    """
    try:
        with zipfile.ZipFile(path) as archive:
            names = set(archive.namelist())
            arrays = {}
            for key in keys:
                if f"{key}.npy" not in names:
                    held = sorted(name[:-4] for name in names if name.endswith(".npy"))
                    raise CorruptDatasetError(f"has no array {key!r} (it holds {held})")
                arrays[key] = _read_npy(archive.read(f"{key}.npy"), key)
            return arrays
    except (zipfile.BadZipFile, zlib.error, EOFError, OSError) as error:
        raise CorruptDatasetError(
            f"{path}: is not a complete .npz archive ({type(error).__name__}: {error})") from error
    except CorruptDatasetError as error:
        raise CorruptDatasetError(f"{path}: {error}") from None


def _read_npy(blob, key):
    stream = io.BytesIO(blob)
    try:
        version = npy_format.read_magic(stream)
        if version == (1, 0):
            shape, fortran_order, dtype = npy_format.read_array_header_1_0(stream)
        elif version == (2, 0):
            shape, fortran_order, dtype = npy_format.read_array_header_2_0(stream)
        else:
            raise CorruptDatasetError(f"array {key!r}: unsupported .npy version {version}")
        if not dtype.hasobject:
            stream.seek(0)
            return npy_format.read_array(stream, allow_pickle=False)
        array = _safe_pickle.RestrictedUnpickler(stream, encoding="latin1").load()
    except CorruptDatasetError:
        raise
    except Exception as error:  # bad bytes can raise almost anything while parsing
        raise CorruptDatasetError(f"array {key!r} is not readable ({type(error).__name__}: {error})") from error
    if not isinstance(array, numpy.ndarray) or array.shape != tuple(shape):
        raise CorruptDatasetError(f"array {key!r}: the pickle does not hold an array of shape {tuple(shape)}")
    return array

