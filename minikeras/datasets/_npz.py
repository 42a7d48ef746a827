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


#: The most bytes one member may declare. Keras's largest such file (IMDB)
#: holds under 20 MB per member; a member declaring more is refused before
#: it is read (a small zip can inflate to gigabytes, and zipfile never reads
#: past the declared size).
MAX_MEMBER_BYTES = 128 * 2**20


def read_npz(path, keys, max_member_bytes=None):
    """Returns ``{key: array}`` for each of ``keys`` in the ``.npz`` at ``path``.

    Memory stays bounded by the file's real contents: each member's declared
    size is checked against ``max_member_bytes`` (default `MAX_MEMBER_BYTES`)
    before it is read, and a numeric array's header must not promise more
    data than the member holds.

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
                limit = MAX_MEMBER_BYTES if max_member_bytes is None else max_member_bytes
                declared = archive.getinfo(f"{key}.npy").file_size
                if declared > limit:
                    raise CorruptDatasetError(f"{key}.npy declares {declared} bytes, over the {limit}-byte limit")
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
            needed = dtype.itemsize
            for size in shape:  # Python ints: no overflow on absurd headers
                needed *= size
            present = len(blob) - stream.tell()
            if needed > present:
                raise CorruptDatasetError(f"array {key!r}: its header declares shape {tuple(shape)} "
                                          f"({needed} bytes), the member holds {present}")
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

