"""Keras 3's dtype promotion of op operands (Tensors, arrays, Python numbers).

The dtype part is ``backend.result_type`` (minikeras/backend/dtypes.py),
Keras's lattice, the one table of the library. This module only turns
operands into what it takes:

- Tensors, arrays and dtype specifiers (``"int32"``, ``numpy.float64``) are
  strong: their dtype;
- Python and NumPy scalars are *weak* (``int``/``float``): ``int32_tensor * 2
  -> int32``, and a Python float with an integer tensor gives float32
  (Keras's floatx), not float64; bools are bool, the bottom of the lattice;
- a complex scalar makes a real result complex (complex128 from float64,
  else complex64).
"""

__all__ = ["result_type"]

import functools
import numbers

import numpy

from minikeras.autograd.autocast import current_dtype, maybe_cast
from minikeras.backend.dtypes import as_numpy_dtype
from minikeras.backend.dtypes import result_type as lattice_result_type
from minikeras.backend.keras_helpers import floatx

FLOATX = numpy.dtype("float32")
_UINT64 = numpy.dtype("uint64")  # the one dtype Keras narrows when both operands have it (to uint32)
_COMPLEX64, _COMPLEX128 = numpy.dtype("complex64"), numpy.dtype("complex128")


def _spec(value):
    """What ``backend.result_type`` takes for ``value``: a dtype, or the weak
    Python type ``int``/``float``/``bool``; ``complex`` for a complex scalar."""
    if isinstance(value, (bool, numpy.bool_)):
        return bool
    if isinstance(value, numbers.Number) and not hasattr(value, "shape"):
        return complex if isinstance(value, complex) else int if isinstance(value, numbers.Integral) else float
    if isinstance(value, numpy.generic):
        kind = value.dtype.kind
        return bool if kind == "b" else int if kind in "iu" else complex if kind == "c" else float
    if hasattr(value, "dtype") and not isinstance(value, type):  # numpy.float64 (the class) is a specifier
        return value.dtype
    return value


@functools.lru_cache(maxsize=512)
def _result_dtype(specs, keras_floatx):
    """The NumPy dtype of ``specs`` (hashable, see :func:`_spec`); ``keras_floatx``
    is in the key because weak types resolve to its precision."""
    weak_complex = complex in specs
    real = [spec for spec in specs if spec is not complex]
    if not real and weak_complex:
        return _COMPLEX64
    dtype = as_numpy_dtype(lattice_result_type(*real))
    if weak_complex and dtype.kind != "c":
        return _COMPLEX128 if dtype == numpy.float64 else _COMPLEX64
    return dtype


def result_type(*values):
    """The dtype Keras gives an op of ``values`` (Tensors, arrays, dtypes or Python numbers).

    Tensors, arrays and dtype specifiers (``"int32"``, ``numpy.float64``) are
    strong; Python and NumPy scalars are weak (they take the other operands'
    dtype when they fit its kind), as in ``keras.backend.result_type``, which
    computes the answer.

    Returns:
        A ``numpy.dtype``.
    """
    specs = tuple(_spec(value) for value in values)
    try:
        return _result_dtype(specs, floatx())
    except TypeError:  # an unhashable specifier: no cache
        return _result_dtype.__wrapped__(specs, floatx())


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
        if dtype_a == dtype_b and (not true_division or dtype_a.kind in "fcV") and dtype_a is not _UINT64:
            return a, b
    elif (dtype_a if dtype_a is not None else dtype_b) is not None:
        known = dtype_a if dtype_a is not None else dtype_b
        other = b if dtype_a is not None else a
        if known.kind in "fcV" or (isinstance(other, int) and not true_division and known.kind in "iu"
                                   and known is not _UINT64):
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
