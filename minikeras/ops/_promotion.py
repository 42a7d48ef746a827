"""Keras 3's dtype promotion (``keras.backend.result_type``) where it differs from NumPy's.

Keras follows JAX's type lattice rather than NumPy's table. The differences
that matter to an op library:

- an integer (or bool) mixed with a float gives that float, never a wider
  one: ``int32 + float32 -> float32`` and ``int64 + float16 -> float16``
  (NumPy gives float64 and float64);
- Python numbers are *weak*: ``int32_tensor * 2 -> int32``, and a Python
  float with an integer tensor gives float32 (Keras's floatx), not float64;
- ``bfloat16`` with ``float16`` gives float32.

Everything else (two ints, two floats, bool with anything) agrees with NumPy.
"""

__all__ = ["result_type"]

import numbers

import numpy

from minikeras.autograd.autocast import current_dtype, maybe_cast

FLOATX = numpy.dtype("float32")


def _kind(dtype):
    return "f" if dtype.kind == "V" or dtype.name == "bfloat16" else dtype.kind


def _join(a, b):
    """The promoted dtype of two (non-weak) NumPy dtypes under Keras's rules."""
    if a == b:
        return a
    kind_a, kind_b = _kind(a), _kind(b)
    if kind_a == "b":
        return b
    if kind_b == "b":
        return a
    if kind_a == "c" or kind_b == "c":
        return numpy.promote_types(a, b)
    if kind_a == "f" and kind_b == "f":
        if "bfloat16" in (a.name, b.name):
            other = b if a.name == "bfloat16" else a
            return FLOATX if other.itemsize <= 4 else other
        return numpy.promote_types(a, b)
    if kind_a == "f":
        return a
    if kind_b == "f":
        return b
    return numpy.promote_types(a, b)


def _strong_dtype(value):
    dtype = getattr(value, "dtype", None)
    if dtype is None or isinstance(value, numpy.generic) and value.ndim == 0 and not hasattr(value, "device"):
        return None
    return numpy.dtype(dtype)


def result_type(*values):
    """The dtype Keras gives an op of ``values`` (Tensors, arrays, dtypes or Python numbers).

    Tensors, arrays and dtype specifiers (``"int32"``, ``numpy.float64``) are
    strong; Python and NumPy scalars are weak (they take the other operands'
    dtype when they fit its kind), as in ``keras.backend.result_type``.

    Returns:
        A ``numpy.dtype``.
    """
    strong = []
    weak_kinds = []
    for value in values:
        if isinstance(value, (bool, numpy.bool_)):
            weak_kinds.append("b")
        elif isinstance(value, numbers.Number) and not hasattr(value, "shape"):
            weak_kinds.append("c" if isinstance(value, complex) else "i" if isinstance(value, numbers.Integral) else "f")
        elif isinstance(value, numpy.generic):
            weak_kinds.append(_kind(value.dtype))
        elif hasattr(value, "dtype"):
            strong.append(numpy.dtype(value.dtype))
        else:
            strong.append(numpy.dtype(value))
    if strong:
        dtype = strong[0]
        for other in strong[1:]:
            dtype = _join(dtype, other)
    else:
        dtype = None
    for kind in weak_kinds:
        if dtype is None:
            dtype = {"b": numpy.dtype(bool), "i": numpy.dtype("int32"), "f": FLOATX,
                     "c": numpy.dtype("complex64")}[kind]
        elif kind == "f" and _kind(dtype) in "biu":
            dtype = FLOATX
        elif kind == "i" and dtype.kind == "b":
            dtype = numpy.dtype("int32")
        elif kind == "c" and dtype.kind != "c":
            dtype = numpy.dtype("complex128") if dtype == numpy.float64 else numpy.dtype("complex64")
    return dtype


def promote_operands(a, b, true_division=False):
    """``a`` and ``b`` with the strong ones cast to Keras's result dtype (see :func:`result_type`).

    Python numbers are left alone (NumPy 2 treats them as weak too). With
    ``true_division``, integer results become float32, as Keras's ``divide``.
    The common cases (same dtypes, a float tensor with a number) return at once.
    Inside a mixed-precision layer a float32 variable counts as the compute
    dtype it is read in (autograd/autocast.py), as in Keras.
    """
    a, b = _autocast(a), _autocast(b)
    dtype_a, dtype_b = getattr(a, "dtype", None), getattr(b, "dtype", None)
    if dtype_a is not None and dtype_b is not None:
        if dtype_a == dtype_b and (not true_division or dtype_a.kind in "fcV"):
            return a, b
    elif (dtype_a if dtype_a is not None else dtype_b) is not None:
        known = dtype_a if dtype_a is not None else dtype_b
        other = b if dtype_a is not None else a
        if known.kind in "fcV" or (isinstance(other, int) and not true_division and known.kind in "iu"):
            return a, b
    dtype = result_type(a, b)
    if true_division and dtype.kind in "biu":
        dtype = FLOATX
    return _cast(a, dtype), _cast(b, dtype)


def _autocast(value):
    """An autocasting variable read in the open autocast scope's dtype."""
    target = current_dtype()
    return value if target is None else maybe_cast(value, target)


def _cast(value, dtype):
    current = getattr(value, "dtype", None)
    if current is None or current == dtype or isinstance(value, numpy.generic):
        return value
    return value.astype(dtype)


def promote_all(values):
    """``values`` (Tensors, arrays, numbers) with the strong ones cast to Keras's common dtype."""
    values = [_autocast(value) for value in values]
    dtypes = {getattr(value, "dtype", None) for value in values}
    if len(dtypes) == 1:
        return list(values)
    dtype = result_type(*values)
    return [_cast(value, dtype) for value in values]


# Keras's sum widens small integers to 32 bits and keeps the rest (NumPy widens every
# integer to 64 bits).
_SUM_DTYPES = {"bool": "int32", "int8": "int32", "int16": "int32", "uint8": "uint32", "uint16": "uint32"}


def sum_dtype(dtype):
    """The dtype of ``keras.ops.sum`` of a tensor of ``dtype``."""
    return numpy.dtype(_SUM_DTYPES.get(numpy.dtype(dtype).name, dtype))
