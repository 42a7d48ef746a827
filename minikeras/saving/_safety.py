"""What keeps loading a file from running code or exhausting memory.

A model file is data. Everything in it that names a class or a function is
resolved against an explicit allow-list (the library's own classes and
functions, classes registered with :func:`register_keras_serializable`,
and the ``custom_objects`` the caller passes), never by importing a module
or looking an attribute up on one. Lambda layers, whose function could be
anything, are refused in *safe mode*, which is on unless the caller opts
out (``load_model(..., safe_mode=False)`` or
``minikeras.config.enable_unsafe_deserialization()``), as in Keras 3.

The same module holds the memory guards that every reader shares: a
dataset's declared shape, dtype and size are checked before a byte is
read, and, while a model is rebuilt from a file, the weights and probe
tensors it creates are bounded by what the file actually holds.

Readers of other formats (``.keras``, ``.weights.h5``) call the same
helpers: :func:`safe_mode_scope`, :func:`resolve_name`,
:func:`check_dataset`, :func:`loading_budget`, :func:`load_errors`.
"""
import contextlib
import json
import threading

import numpy

from minikeras.saving import _bfloat16, _inflation

# Declared sizes above this are refused unless load_model gets a larger
# ``max_bytes``: far beyond any model this library trains on one host, far
# below what would take a machine down.
DEFAULT_MAX_BYTES = 4 * 2**30

# A rebuild may create probe tensors (one small batch per input) and weights
# this much larger than the file's own weights before we call it absurd.
_PROBE_FLOOR_BYTES = 64 * 2**20

#: What one vocabulary entry costs a lookup layer beside its characters (its
#: string object, list slot and index entry: ~110 bytes measured at the peak
#: of ``set_vocabulary`` for short tokens), counted against the budget while
#: a file loads.
TOKEN_BYTES = 128

_unsafe_enabled = False
_local = threading.local()
_REGISTERED = {}
_REGISTERED_NAMES = {}  # object -> "package>name" (Keras's GLOBAL_CUSTOM_NAMES)


class UnsafeDeserializationError(ValueError):
    """Loading would run code named by the file (a Lambda layer) and safe
    mode is on. A ValueError, as Keras raises."""


class FileLoadError(ValueError):
    """A file could not be loaded: corrupt, truncated, tampered with,
    inconsistent with itself, or declaring absurd sizes. The message names
    the file and what is wrong."""


# ------------------------------------------------------------------ safe mode
def enable_unsafe_deserialization():
    """Allow Lambda layers (and other deserialised callables) everywhere.

    Only for files you trust: a Lambda's function is taken from
    ``custom_objects`` or the registered functions, and it runs while the
    model is rebuilt. Prefer ``load_model(path, safe_mode=False)`` for one
    load.
    """
    global _unsafe_enabled
    _unsafe_enabled = True


def in_safe_mode():
    """True unless unsafe deserialisation was enabled globally, or the
    innermost :func:`safe_mode_scope` turned safe mode off."""
    if _unsafe_enabled:
        return False
    scoped = getattr(_local, "safe_mode", None)
    return True if scoped is None else scoped


def resolve_safe_mode(safe_mode):
    """Whether to refuse callables: False after the global switch, else an
    explicit ``safe_mode`` argument, else the current mode (the switch wins,
    as ``load_model``'s ``safe_mode`` defaults to True)."""
    if safe_mode is None or _unsafe_enabled:
        return in_safe_mode()
    return bool(safe_mode)


@contextlib.contextmanager
def safe_mode_scope(safe_mode):
    """Run a deserialisation with ``safe_mode`` (None: keep the current mode)."""
    previous = getattr(_local, "safe_mode", None)
    _local.safe_mode = previous if safe_mode is None else bool(safe_mode)
    try:
        yield
    finally:
        _local.safe_mode = previous


@contextlib.contextmanager
def deserialization_scope(safe_mode=True):
    """Rebuild objects from a config (``from_config``, ``layers.deserialize``,
    ``model_from_json``...), as Keras's ``SafeModeScope``: a safe mode set by
    an enclosing scope (``load_model(..., safe_mode=...)``) wins, else
    ``safe_mode``. Inside, :func:`refuses_outside_files` tells a layer that
    its config is data and may not name a file to read in safe mode."""
    previous, depth = getattr(_local, "safe_mode", None), getattr(_local, "deserializing", 0)
    _local.safe_mode = previous if previous is not None else (True if safe_mode is None else bool(safe_mode))
    _local.deserializing = depth + 1
    try:
        yield
    finally:
        _local.safe_mode, _local.deserializing = previous, depth


def refuses_outside_files():
    """Whether a config being deserialized (or a file being loaded) in safe
    mode is refused the reading of another file it names (a lookup's
    vocabulary path), as Keras refuses it; user code that constructs the
    layer itself may name any file."""
    deserializing = getattr(_local, "deserializing", 0) > 0 or loading()
    return deserializing and in_safe_mode()


def refuse_lambda(layer_name, function_name, module_name):
    """Raise UnsafeDeserializationError for a Lambda met in safe mode."""
    raise UnsafeDeserializationError(
        f"Refused to deserialize the Lambda layer {layer_name!r} (function {function_name!r}, module "
        f"{module_name!r}): a Lambda runs arbitrary Python code, and safe_mode is on. If you trust this file, "
        "load it with safe_mode=False (load_model(path, safe_mode=False, custom_objects={name: function})) or "
        "call minikeras.config.enable_unsafe_deserialization() first."
    )


# ---------------------------------------------------------------- allow-list
def register_keras_serializable(package="Custom", name=None):
    """Decorator: make a class or function loadable by name without
    ``custom_objects`` (it joins the allow-list as ``name`` and
    ``"package>name"``). A class is saved under the ``registered_name``
    ``"package>name"``, as Keras 3 names it.

    Example:
        >>> @register_keras_serializable()
        ... def double(x):
        ...     return x * 2
    """
    def decorate(obj):
        key = name or obj.__name__
        _REGISTERED[key] = obj
        _REGISTERED[f"{package}>{key}"] = obj
        _REGISTERED_NAMES[obj] = f"{package}>{key}"
        if isinstance(obj, type):
            # The name files carry as ``registered_name`` (Keras 3 resolves it
            # against its own register_keras_serializable).
            obj._keras_registered_name = f"{package}>{key}"
        return obj

    return decorate


def registered_name(obj):
    """``"package>name"`` for an object registered with
    register_keras_serializable, else None."""
    try:
        return _REGISTERED_NAMES.get(obj)
    except TypeError:  # unhashable
        return None


def registered_objects():
    """A copy of ``{name: object}`` registered with register_keras_serializable
    (or added to ``get_custom_objects()``), with the objects of the active
    ``custom_object_scope`` blocks on top (saving/object_registration.py)."""
    found = dict(_REGISTERED)
    for scope in getattr(_local, "custom_object_scopes", ()):
        found.update(scope)
    return found


def resolve_name(name, allowed, custom_objects=None, kind="object", source="the file"):
    """The object a file names, looked up only in the allow-list.

    Args:
        name: the name read from the file.
        allowed: ``{name: object}`` of the library objects of this kind.
        custom_objects: the caller's ``{name: object}``, searched first.
        kind: what the name stands for, for messages ("loss", "layer class").
        source: the file, for messages.

    Raises:
        ValueError: the name is not a string or not on the allow-list. It is
            never imported or looked up as an attribute of a module.
    """
    if not isinstance(name, str):
        raise ValueError(f"Expected the name of a {kind} in {source}, found {name!r}.")
    for table in (custom_objects or {}, allowed, registered_objects()):
        if name in table:
            return table[name]
    raise ValueError(
        f"Unknown {kind} {name!r} in {source}: names resolve only against minikeras's own objects, "
        f"register_keras_serializable() and custom_objects. If it is yours, pass custom_objects={{{name!r}: ...}}."
    )


def is_library_object(obj):
    """Whether ``obj`` (a class or function) is defined inside minikeras."""
    module = getattr(obj, "__module__", None) or ""
    return module == "minikeras" or module.startswith("minikeras.")


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


# --------------------------------------------------------- rebuild memory budget
class _Budget:
    def __init__(self, limit, source):
        self.limit, self.used, self.source = limit, 0, source


@contextlib.contextmanager
def loading_budget(weight_bytes, source, max_bytes=DEFAULT_MAX_BYTES):
    """Bound what rebuilding a model from ``source`` may allocate.

    Inside the scope, layers create their weights without running the
    initializers (zeros: the file's values replace them), and every weight
    and probe tensor counts against a budget of the file's own weight bytes
    (plus a floor for probe batches), so a config declaring huge layers is
    refused before it allocates.

    Args:
        weight_bytes: the total declared size of the file's weight datasets.
        source: the file, for messages.
        max_bytes: a hard ceiling on the budget; None for no budget.
    """
    limit = max(2 * int(weight_bytes), _PROBE_FLOOR_BYTES)
    if max_bytes is None:  # a trusted file: skip the initializers, count nothing
        limit = float("inf")
    else:
        limit = min(limit, max_bytes)
    previous = getattr(_local, "budget", None)
    _local.budget = _Budget(limit, source)
    try:
        yield
    finally:
        _local.budget = previous


def loading():
    """Whether a model is being rebuilt from a file (weights come next)."""
    return getattr(_local, "budget", None) is not None


def charge(shape, dtype, what, cumulative=True):
    """Count an allocation of ``shape``/``dtype`` against the rebuild budget
    (no-op outside :func:`loading_budget`). ``cumulative=False`` checks a
    temporary allocation (a probe batch) alone, without keeping it counted.

    Raises:
        FileLoadError: the allocation would go past the budget.
    """
    if getattr(_local, "budget", None) is None:
        return
    nbytes = int(numpy.prod([int(s) for s in shape], dtype=object)) * numpy.dtype(dtype).itemsize
    charge_bytes(nbytes, f"{what} of shape {tuple(shape)}", cumulative)


def charge_bytes(nbytes, what, cumulative=True):
    """:func:`charge` for ``nbytes`` that are no array (a vocabulary's tokens,
    the OOV tokens of a lookup): ``what`` says what and how many.

    Raises:
        FileLoadError: the allocation would go past the budget.
    """
    budget = getattr(_local, "budget", None)
    if budget is None:
        return
    nbytes = int(nbytes)
    held = budget.used if cumulative else 0
    if held + nbytes > budget.limit:
        raise FileLoadError(
            f"{budget.source}: rebuilding the model would allocate {what} ({nbytes} bytes, {held} already), more "
            f"than the file's weights justify (limit {budget.limit} bytes). The model config declares sizes its "
            "weights do not back: refusing it (load with max_bytes=None if the file is trusted)."
        )
    if cumulative:
        budget.used += nbytes


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
    from minikeras.utils.argument_validation import _raised_by_library_check

    return _raised_by_library_check(error)
