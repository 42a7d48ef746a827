"""Argument and input validation at the public boundary.

Every public entry (tensor creation, ops, layers, losses, metrics,
optimizers) checks what it is given here, so that bad input meets one
consistent, clear error naming the entry, what was expected and what was
received, instead of a raw NumPy traceback from deep inside a kernel or,
worse, a silently wrong result (an object array with ``None`` computed as
NaN, a bool negated, a shape of ``1.9`` truncated to 1).

The rules:

- data must be numeric: arrays of objects, strings, bytes, dates are
  refused with TypeError, and so is ``None``;
- bools are refused by entries with no boolean meaning (``relu``,
  ``negative``, ``softmax``...), complex by entries that do not support it
  (``var``, ``std``, activations);
- sizes, shapes, counts and paddings are ints (never floats or bools) in
  their range; numeric settings are finite.

Like Keras's ``_support/argument_validation.py``, this module holds only
checks; it converts nothing beyond returning a checked value in its
canonical form (a tuple, a lowercased string, a Tensor).
"""
import linecache
import math
import numbers
import os

import numpy


from minikeras import backend
from minikeras.backend.dtypes import as_numpy_dtype, bfloat16

_NUMERIC_KINDS = "biufc"
_KIND_NAMES = {"O": "object", "U": "string", "S": "bytes", "V": "structured", "M": "datetime", "m": "timedelta"}


def is_int(value):
    """True for a Python or NumPy integer (not a bool)."""
    return isinstance(value, (int, numpy.integer)) and not isinstance(value, (bool, numpy.bool_))


def _describe(value):
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def check_dtype(op_name, dtype, allow_bool=True, allow_complex=True):
    """Raise TypeError unless ``dtype`` is numeric and allowed by the entry.

    Args:
        op_name: the public entry, for the message.
        dtype: a NumPy dtype (or anything ``numpy.dtype`` takes).
        allow_bool: whether the entry gives bools a meaning.
        allow_complex: whether the entry supports complex numbers.
    """
    try:
        dtype = bfloat16() if isinstance(dtype, str) and dtype == "bfloat16" else numpy.dtype(dtype)
    except TypeError:  # "string" (Keras's text dtype) or a name NumPy does not know
        raise TypeError(f"{op_name}: expected a numeric dtype (bool, int, float or complex), received "
                        f"{dtype!r}.") from None
    if dtype.kind not in _NUMERIC_KINDS and dtype.name != "bfloat16":  # ml_dtypes' bfloat16 has kind "V"
        kind = _KIND_NAMES.get(dtype.kind, str(dtype))
        raise TypeError(
            f"{op_name}: expected numeric data (bool, int, float or complex), received an array of {kind} "
            f"dtype {dtype}. Convert it to numbers first, e.g. numpy.asarray(x, dtype='float32')."
        )
    if dtype.kind == "b" and not allow_bool:
        raise TypeError(f"{op_name} does not accept bool inputs, received dtype bool. Cast to a number first, "
                        "e.g. ops.cast(x, 'float32').")
    if dtype.kind == "c" and not allow_complex:
        raise TypeError(f"{op_name} does not support complex inputs, received dtype {dtype}.")
    return dtype


_tensor_class = []  # filled on first use: autograd imports this module


def _load_tensor_class():
    from minikeras.autograd.tensor import Tensor

    _tensor_class.append(Tensor)
    return Tensor



def validate_tensor_input(op_name, value, allow_bool=True, allow_complex=True, allow_sequence=False):
    """Check that ``value`` may be a tensor operand of ``op_name``; return it.

    Accepted: Tensors, NumPy/CuPy arrays and scalars of numeric dtype,
    Python numbers, and (with ``allow_sequence``) nested lists/tuples of
    numbers.

    Raises:
        TypeError: ``value`` is None, non-numeric data (objects, strings...),
            another type, or a bool/complex the entry does not allow.
    """
    tensor_class = _tensor_class[0] if _tensor_class else _load_tensor_class()
    if isinstance(value, tensor_class):
        dtype = value.data.dtype  # the common case first: ops run this on every call
        if dtype.kind not in "iuf":
            check_dtype(op_name, dtype, allow_bool, allow_complex)
        return value
    if isinstance(value, (numpy.ndarray, numpy.generic)) or backend.is_array(value):
        if value.dtype.kind not in "iuf":
            check_dtype(op_name, value.dtype, allow_bool, allow_complex)
        return value
    if type(value) in (float, int):
        return value
    if isinstance(value, (bool, numbers.Number)):
        if isinstance(value, bool) and not allow_bool:
            check_dtype(op_name, numpy.bool_, allow_bool, allow_complex)
        if isinstance(value, complex) and not allow_complex:
            check_dtype(op_name, numpy.complex128, allow_bool, allow_complex)
        return value
    if value is None:
        raise TypeError(f"{op_name}: expected a Tensor, an array or a number, received None.")
    if allow_sequence and isinstance(value, (list, tuple)):
        try:
            host = numpy.asarray(value)
        except ValueError as error:  # ragged nesting
            raise ValueError(f"{op_name}: cannot make a tensor from a ragged nested sequence ({error}).") from None
        check_dtype(op_name, host.dtype, allow_bool, allow_complex)
        return value
    if isinstance(value, (list, tuple)):
        raise TypeError(f"{op_name}: expected a Tensor, an array or a number, received a {type(value).__name__} "
                        f"{_describe(value)}. Wrap it with minikeras.tensor(...) first.")
    hint = ""
    if any(hasattr(value, name) for name in ("__array__", "__dlpack__", "__cuda_array_interface__")):
        # Models, fit/evaluate/predict, losses and metrics convert these at their boundary; ops do not.
        hint = " Convert another library's array with minikeras.tensor(...) (or numpy.asarray) before an op."
    raise TypeError(f"{op_name}: expected a Tensor, an array or a number, received {type(value).__name__} "
                    f"{_describe(value)}.{hint}")


def as_tensor(op_name, value, allow_bool=True, allow_complex=True):
    """``value`` checked by :func:`validate_tensor_input` and made a Tensor.

    Python floats become float32 and Python ints int32 (Keras's dtypes for
    them; int64 only past int32's range); arrays keep their dtype.
    """
    from minikeras.autograd.tensor import Tensor

    validate_tensor_input(op_name, value, allow_bool, allow_complex)
    if type(value) is int and -2**31 <= value < 2**31:
        return Tensor(numpy.int32(value))
    return value if isinstance(value, Tensor) else Tensor(value)


def _scalar_of(value, kinds):
    """A 0-d NumPy array of one of ``kinds`` as its scalar (NumPy takes ``array(3)`` as the number 3)."""
    if isinstance(value, numpy.ndarray) and value.ndim == 0 and value.dtype.kind in kinds:
        return value[()]
    return value


def validate_int(op_name, name, value, minimum=None, maximum=None):
    """``value`` as an int in ``[minimum, maximum]``; floats and bools refused.

    Raises:
        TypeError: not an int.
        ValueError: out of range.
    """
    value = _scalar_of(value, "iu")
    if not is_int(value):
        raise TypeError(f"{op_name}: {name} must be an int, received {type(value).__name__} {_describe(value)}.")
    if minimum is not None and value < minimum:
        bound = "positive" if minimum == 1 else ("non-negative" if minimum == 0 else f">= {minimum}")
        raise ValueError(f"{op_name}: {name} must be {bound}, received {value!r}.")
    if maximum is not None and value > maximum:
        raise ValueError(f"{op_name}: {name} must be <= {maximum}, received {value!r}.")
    return int(value)


def validate_shape(op_name, shape, name="shape"):
    """A shape (an int or a sequence of ints >= 0) as a tuple of ints.

    Raises:
        TypeError: a dimension is not an int (``1.9``, ``True``, ``None``).
        ValueError: a dimension is negative.
    """
    dims = (shape,) if is_int(shape) else shape
    if not isinstance(dims, (tuple, list)) and not (backend.is_array(dims) and dims.ndim == 1):
        raise TypeError(f"{op_name}: {name} must be an int or a tuple of ints, received {_describe(shape)}.")
    result = []
    for dim in dims:
        if not is_int(dim):
            raise TypeError(f"{op_name}: {name} must hold ints, received {_describe(shape)} "
                            f"(dimension {_describe(dim)} is a {type(dim).__name__}).")
        if dim < 0:
            raise ValueError(f"{op_name}: {name} dimensions must be non-negative, received {_describe(shape)}.")
        result.append(int(dim))
    return tuple(result)


def validate_flag(op_name, name, value):
    """``value`` as a bool: a bool, or the ints 0 and 1 (NumPy takes them too).

    A string, a float, None or a list is refused rather than read as true or
    false by its truth value (``keepdims="no"`` would keep the axes).

    Raises:
        TypeError: naming the entry and the flag.
    """
    if isinstance(value, (bool, numpy.bool_)) or (is_int(value) and value in (0, 1)):
        return bool(value)
    raise TypeError(f"{op_name}: {name} must be a bool, received {type(value).__name__} {_describe(value)}.")


def validate_axis(op_name, axis, ndim, name="axis"):
    """One axis of a tensor with ``ndim`` axes as a non-negative int.

    Raises:
        TypeError: not an int (a bool, a float, a string, None).
        ValueError: outside ``[-ndim, ndim)``.
    """
    if not is_int(axis):
        raise TypeError(f"{op_name}: {name} must be an int, received {type(axis).__name__} {_describe(axis)}.")
    if not -ndim <= axis < ndim:
        raise ValueError(f"{op_name}: {name} {axis} is out of range for a tensor with {ndim} dimensions "
                         f"(expected {-ndim} <= {name} < {ndim}).")
    return int(axis) % ndim


def validate_dtype(op_name, dtype, name="dtype"):
    """``dtype`` (a name, a NumPy dtype or scalar type) as a numeric NumPy dtype.

    Refused: what NumPy would read as a dtype by accident (``0``, ``False``,
    ``""``, ``[]`` give float64 or a structured dtype), and non-numeric ones.

    Raises:
        TypeError: naming the entry and what was received.
    """
    if not (isinstance(dtype, str) and dtype) and not isinstance(dtype, (numpy.dtype, type)):
        raise TypeError(f"{op_name}: {name} must be a dtype name such as 'float32', received "
                        f"{type(dtype).__name__} {_describe(dtype)}.")
    try:
        result = as_numpy_dtype(dtype) if isinstance(dtype, str) and dtype == "bfloat16" else numpy.dtype(dtype)
    except TypeError:
        raise TypeError(f"{op_name}: {_describe(dtype)} is not a dtype.") from None
    return check_dtype(op_name, result)


# The largest window size, stride or dilation: the fused pooling/convolution
# kernels take them as 32-bit ints on every device, so a larger one is refused
# here, before any kernel, rather than overflow on a GPU only.
INT32_MAX = 2**31 - 1


_STANDARD_TUPLES = {}  # (value, n, allow_zero) -> the checked tuple, for plain ints and tuples of them
_INT_TYPE = {int}


def standardize_tuple(op_name, name, value, n, allow_zero=False):
    """An int or ``n`` ints as a tuple of ``n`` positive (or >= 0) ints, as
    Keras's ``standardize_tuple`` (strides, kernel sizes, dilation rates).

    Raises:
        ValueError: wrong length, a non-int, or a value out of range
            (below 1, or 0 with ``allow_zero``; above :data:`INT32_MAX`).
    """
    plain = type(value) is int or (type(value) is tuple and set(map(type, value)) <= _INT_TYPE)
    if plain:  # bools, NumPy ints and lists are checked each time: (True,) == (1,) as a key
        key = (value, n, allow_zero)
        known = _STANDARD_TUPLES.get(key)
        if known is not None:
            return known
    if is_int(value):
        values = (int(value),) * n
    elif isinstance(value, (tuple, list)) and len(value) == n and all(is_int(v) for v in value):
        values = tuple(int(v) for v in value)
    else:
        what = "an int" if n == 1 else f"an int or a tuple of {n} ints"
        raise ValueError(f"{op_name}: {name} must be {what}, received {_describe(value)}.")
    if min(values) < (0 if allow_zero else 1):
        bound = "non-negative" if allow_zero else "positive"
        raise ValueError(f"{op_name}: {name} must be {bound}, received {_describe(value)}.")
    if max(values) > INT32_MAX:
        raise ValueError(f"{op_name}: {name} must be at most {INT32_MAX} (window kernels take 32-bit sizes), "
                         f"received {_describe(value)}.")
    if plain and len(_STANDARD_TUPLES) < 1024:
        _STANDARD_TUPLES[key] = values
    return values


def standardize_padding(op_name, value, allowed=("valid", "same")):
    """``value`` lowercased if it is one of ``allowed``, else ValueError."""
    if isinstance(value, str) and value.lower() in allowed:
        return value.lower()
    choices = " or ".join(repr(name) for name in allowed)
    raise ValueError(f"{op_name}: padding must be {choices}, received {_describe(value)}.")


def is_option(value, choices):
    """True when ``value`` is one of ``choices`` (strings, ints, None), compared by type
    too: an array is no option (``array in choices`` would be NumPy's ambiguous truth
    value), nor is ``True`` the option ``1``."""
    return any(value is choice or (type(value) is type(choice) and value == choice) for choice in choices)


def validate_option(op_name, name, value, choices):
    """``value`` if it is one of ``choices`` (see :func:`is_option`), else ValueError naming them."""
    if is_option(value, choices):
        return value
    listed = ", ".join(repr(choice) for choice in choices)
    raise ValueError(f"{op_name}: {name} must be one of {listed}, received {_describe(value)}.")


def validate_number(op_name, name, value, minimum=None, maximum=None, finite=True, allow_none=False):
    """``value`` as a float (a real number, finite unless ``finite=False``).

    Raises:
        TypeError: not a real number (None, a string, a bool, complex).
        ValueError: not finite, or outside ``[minimum, maximum]``.
    """
    if value is None and allow_none:
        return None
    value = _scalar_of(value, "iuf")
    real = isinstance(value, (numbers.Real, numpy.floating, numpy.integer)) and not isinstance(value, (bool, numpy.bool_))
    if not real:
        raise TypeError(f"{op_name}: {name} must be a number, received {type(value).__name__} {_describe(value)}.")
    value = float(value)
    if finite and not math.isfinite(value):
        raise ValueError(f"{op_name}: {name} must be finite, received {value!r}.")
    if minimum is not None and value < minimum:
        raise ValueError(f"{op_name}: {name} must be >= {minimum}, received {value!r}.")
    if maximum is not None and value > maximum:
        raise ValueError(f"{op_name}: {name} must be <= {maximum}, received {value!r}.")
    return value


# ----------------------------------------------------------- entry points
_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _raised_by_library_check(error):
    """True when ``error`` comes from a ``raise`` statement in minikeras
    (one of its own argument checks), not from NumPy or Python internals."""
    tb = error.__traceback__
    if tb is None:
        return False
    while tb.tb_next is not None:
        tb = tb.tb_next
    filename = tb.tb_frame.f_code.co_filename
    if not os.path.abspath(filename).startswith(_PACKAGE_DIR + os.sep):
        return False
    return linecache.getline(filename, tb.tb_lineno).lstrip().startswith("raise")


class entry_point:  # noqa: N801  (used as a function: ``with entry_point("Dense", name):``)
    """Name the public entry ``name`` in the argument errors raised under it.

    A layer, loss, metric or optimizer runs ops whose own checks name the
    op (``mean: axis -1 is out of range...``); a user who called
    ``MeanSquaredError()(y_true, y_pred)`` needs to see that it came from
    there. The innermost entry prefixes its name once; errors that are not
    the library's own checks (raw NumPy errors) pass unchanged, so that the
    fuzz test still sees them as leaks to fix. A class, not a generator
    context manager: every layer call enters one (three Python calls, not six).

    Args:
        name: the entry (an op or class name, ``"Dense"``).
        instance_name: the object's own name (``"dense_1"``), if any.
    """

    __slots__ = ("name", "instance_name")

    def __init__(self, name, instance_name=None):
        self.name, self.instance_name = name, instance_name

    def __enter__(self):
        return None

    def __exit__(self, kind, error, traceback):
        if kind not in (ValueError, TypeError, IndexError) or getattr(error, "_minikeras_entry", False):
            return False
        name, instance_name = self.name, self.instance_name
        message = str(error)
        named = message.startswith(name) or (
            instance_name is not None and (message.startswith(instance_name) or f"'{instance_name}'" in message))
        if named or not _raised_by_library_check(error):
            error._minikeras_entry = True
            return False
        label = name if instance_name is None else f"{name} {instance_name!r}"
        relabeled = type(error)(f"{label}: {message}")
        relabeled._minikeras_entry = True
        raise relabeled.with_traceback(traceback) from None


def raised_by_library_check(error):
    """True when ``error`` was raised by one of minikeras's own argument checks
    (a ``raise`` statement in the package), not by NumPy or Python internals."""
    return _raised_by_library_check(error)
