"""What keeps reading a file from exhausting memory, and its errors readable.

A dataset's declared shape, dtype and size are checked from its header
before a byte is read (:func:`check_dataset`, :func:`check_not_truncated`,
:func:`check_optimizer_bytes`), and :func:`load_errors` turns any raw failure
while reading into a ``FileLoadError`` naming the file.

What the layers consult as well lives below ``saving/``, in ``_support/``:
the allow-list of names (``object_registration.py``: ``resolve_name``,
``register_keras_serializable``), safe mode (``safe_mode.py``) and the
memory budget of a rebuild (``load_budget.py``: ``loading_budget``,
``charge``). Readers of every format (``.keras``, ``.weights.h5``, ``.h5``)
call the same helpers.
"""
import contextlib
import json

import numpy

from minikeras._support.argument_validation import _raised_by_library_check
from minikeras._support.load_budget import DEFAULT_MAX_BYTES, FileLoadError
from minikeras._support.object_registration import is_library_object
from minikeras._support.safe_mode import UnsafeDeserializationError
from minikeras.saving import _bfloat16, _inflation


# -------------------------------------------------------------- dataset checks
def check_dataset(dataset, source, expected_shape=None, max_bytes=DEFAULT_MAX_BYTES, what=None):
    """Check an h5py dataset from its metadata alone, before any read.

    Args:
        dataset: the h5py Dataset.
        source: the file, for messages.
        expected_shape: the shape the target weight has, if known.
        max_bytes: the largest size accepted.
        what: how to name the dataset (default: its path).

    Returns:
        The dataset's size in bytes.

    Raises:
        FileLoadError: not a numeric dataset, a shape other than
            ``expected_shape``, a size over ``max_bytes``, a declared size
            the file does not store (a sparse or truncated dataset), or a
            compressed one inflating past what real weights compress to
            (_inflation.py; not checked when ``max_bytes`` is None).
    """
    what = what or getattr(dataset, "name", "a dataset")
    try:
        dtype, shape = dataset.dtype, tuple(int(s) for s in dataset.shape)
    except Exception as error:  # noqa: BLE001  (h5py raises many types for a damaged header)
        raise FileLoadError(f"{source}: cannot read the header of dataset {what!r} ({error}).") from None
    if (dtype.kind not in "biuf" and not _bfloat16.is_bfloat16_dataset(dataset)) or dtype.itemsize > 16:
        raise FileLoadError(f"{source}: dataset {what!r} has dtype {dtype}, expected a numeric array.")
    if expected_shape is not None and shape != tuple(expected_shape):
        raise FileLoadError(
            f"{source}: dataset {what!r} declares shape {shape}, the layer expects {tuple(expected_shape)}.")
    nbytes = int(numpy.prod(shape, dtype=object)) * dtype.itemsize
    if max_bytes is not None and nbytes > max_bytes:
        raise FileLoadError(
            f"{source}: dataset {what!r} declares {nbytes} bytes (shape {shape}, {dtype}), over the limit "
            f"max_bytes={max_bytes}. Pass a larger max_bytes if the file is trusted.")
    stored = dataset.id.get_storage_size()
    filtered = bool(dataset.id.get_create_plist().get_nfilters())
    if not filtered and nbytes and stored < nbytes:
        raise FileLoadError(
            f"{source}: dataset {what!r} declares {nbytes} bytes but the file stores only {stored}: the file "
            "is truncated or crafted.")
    if filtered:
        _inflation.check_inflation(nbytes, stored, f"dataset {what!r}", source, max_bytes)
    return nbytes


def check_not_truncated(dataset, weight, owner, source):
    """Refuse reading a float dataset into an integer weight: a layer whose
    dtype policy is ``"int8"``/``"uint8"`` (or another integer type) would
    keep only the integer part of each value (``[-0.06, 0.01]`` -> ``[0,
    0]``) and train on. Keras's quantized policies (``"int8_from_float32"``,
    which keep a scale beside the integers) store their int8 kernels as
    integers, which pass; a quantized file whose int8 kernel holds float
    values is refused as well (layers/core/quantized_weights.py).

    Args:
        dataset: the h5py Dataset, checked from its header (nothing read).
        weight: the weight to fill (its ``name`` and ``dtype``).
        owner: the layer holding it, or None when unknown.
        source: the file, for messages.

    Raises:
        FileLoadError: naming the layer, its policy, the weight and both dtypes.
    """
    stored = dataset.dtype
    if stored.kind != "f" and not _bfloat16.is_bfloat16_dataset(dataset):
        return
    target = numpy.dtype(str(weight.dtype))
    if target.kind not in "biu":
        return
    policy = getattr(getattr(owner, "dtype_policy", None), "name", None)
    layer = f"Layer '{owner.name}' ({type(owner).__name__}, dtype policy {policy!r})" if owner is not None \
        else f"The layer of weight '{weight.name}'"
    raise FileLoadError(
        f"{source}: {layer} keeps its weight '{weight.name}' as {target}, but the file stores it as "
        f"{'bfloat16' if stored.kind != 'f' else stored} values: loading would truncate them to integers. "
        "A quantized layer ('int8_from_float32' and kin) stores its integer kernel as integers; otherwise give "
        "the layer a float dtype policy ('float32', 'mixed_float16', ...) in the config.")


def check_optimizer_bytes(declared, model, source, max_bytes=DEFAULT_MAX_BYTES):
    """Refuse an optimizer state declaring more bytes than any optimizer keeps
    for ``model`` (a few float64 slots per weight), before it is read.

    Raises:
        FileLoadError: naming the file and both sizes (not checked when
            ``max_bytes`` is None).
    """
    weights = sum(int(numpy.prod(weight.shape, dtype=object)) * 8 for weight in model.weights)
    if max_bytes is not None and declared > 4 * weights + 2**20:
        raise FileLoadError(
            f"{source}: its optimizer state declares {declared} bytes for a model of {len(model.weights)} weights "
            f"({weights // 8} values): more than any optimizer keeps. Refusing to read it.")


# ------------------------------------------------------------- error wrapping
_PASS_THROUGH = (FileNotFoundError, IsADirectoryError, PermissionError, UnsafeDeserializationError,
                 FileLoadError, MemoryError, KeyboardInterrupt)


@contextlib.contextmanager
def load_errors(source):
    """Turn any failure while reading ``source`` into FileLoadError naming it.

    The library's own checks (a plain ValueError raised by minikeras code,
    whose message already says what is wrong: an unknown name, a shape
    mismatch) keep their type; raw errors from h5py, JSON, NumPy, a
    recursion limit, or Python itself on a malformed config (KeyError,
    TypeError, ...) become FileLoadError (a ValueError) with the file and
    the original message. Missing files and refused Lambdas pass through.
    """
    try:
        yield
    except _PASS_THROUGH:
        raise
    except json.JSONDecodeError as error:
        raise FileLoadError(f"{source} is corrupt: its JSON metadata does not parse ({error}).") from None
    except RecursionError:
        raise FileLoadError(f"{source} is corrupt: its config nests too deeply.") from None
    except ValueError as error:
        # minikeras's own ValueError subclasses (an unknown class) are checks too.
        own_type = type(error) is ValueError or is_library_object(type(error))
        if own_type and _raised_by_minikeras(error):
            raise
        raise FileLoadError(f"{source} cannot be loaded (corrupt, or not a minikeras/Keras file?): "
                            f"{type(error).__name__}: {error}") from error
    except Exception as error:  # noqa: BLE001  (h5py's OSError/KeyError/RuntimeError variants, bad configs)
        raise FileLoadError(f"{source} cannot be loaded (corrupt, truncated or malformed?): "
                            f"{type(error).__name__}: {error}") from error


def _raised_by_minikeras(error):
    """Whether ``error`` comes from a ``raise`` statement of minikeras (one of its
    checks), not from NumPy called by minikeras code (``numpy.zeros`` of a
    negative shape read from the file)."""
    return _raised_by_library_check(error)
