"""Keras's parameters for ops whose minikeras signature predates them.

``max``/``min`` with ``initial``, ``prod`` with ``dtype``, ``eye(N, M, k,
dtype)``, ``convert_to_tensor(..., ragged)``: thin adapters over the
existing ops (which keep their own signatures for the code that calls them),
so that Keras code passing these runs unchanged.
Imported by ``minikeras.ops`` after every family, so these names win there
and in ``ops.numpy``.
"""

__all__ = ["max", "min", "prod", "eye", "convert_to_tensor"]

import numpy

from minikeras.ops import keras_names as _keras_names
from minikeras.ops import creation as _creation
from minikeras.ops import reduce as _reduce
from minikeras.ops.math._elementwise import operand
from minikeras.ops.math._operands import _as_tensor
from minikeras._support.argument_validation import validate_dtype, validate_flag, validate_int


def _with_initial(op_name, reducer, combine, x, axis, keepdims, initial):
    if initial is None:
        return reducer(x, axis, keepdims)
    x = _as_tensor(op_name, operand(op_name, x))
    axes = tuple(range(x.ndim)) if axis is None else ((axis,) if isinstance(axis, int) else tuple(axis))
    if any(x.shape[a] == 0 for a in axes):
        shape = tuple(1 if i in [a % x.ndim for a in axes] else s for i, s in enumerate(x.shape))
        if not keepdims:
            shape = tuple(s for i, s in enumerate(x.shape) if i not in [a % x.ndim for a in axes])
        return _creation.full(shape, initial, dtype=x.dtype)
    return combine(reducer(x, axis, keepdims), initial)


def max(x, axis=None, keepdims=False, initial=None):  # noqa: A001  (keras.ops name)
    """Maximum over ``axis``, and at least ``initial`` when given (which an empty axis returns)."""
    from minikeras.ops.math.compare import maximum

    return _with_initial("max", _reduce.max, maximum, x, axis, keepdims, initial)


def min(x, axis=None, keepdims=False, initial=None):  # noqa: A001  (keras.ops name)
    """Minimum over ``axis``, and at most ``initial`` when given (which an empty axis returns)."""
    from minikeras.ops.math.compare import minimum

    return _with_initial("min", _reduce.min, minimum, x, axis, keepdims, initial)


_PROD_WIDENED = {"bool": "int32", "int8": "int32", "int16": "int32", "uint8": "uint32", "uint16": "uint32"}


def prod(x, axis=None, keepdims=False, dtype=None):
    """Product over ``axis`` in ``dtype`` (default: Keras's, which widens bool and 8/16-bit
    integers to 32 bits and keeps other dtypes; NumPy would widen int32 to int64)."""
    x = _as_tensor("prod", operand("prod", x))
    dtype = validate_dtype("prod", dtype) if dtype is not None else \
        numpy.dtype(_PROD_WIDENED.get(x.dtype.name, x.dtype))
    if x.dtype != dtype:
        x = x.astype(dtype)
    result = _reduce.prod(x, axis, keepdims)
    return result if result.dtype == dtype else result.astype(dtype)


def eye(N, M=None, k=0, dtype=None):  # noqa: N803  (keras.ops name)
    """An ``N x M`` matrix with ones on the ``k``-th diagonal."""
    rows = validate_int("eye", "N", N, minimum=0)
    columns = rows if M is None else validate_int("eye", "M", M, minimum=0)
    k = validate_int("eye", "k", k)
    dtype = "float32" if dtype is None else validate_dtype("eye", dtype)
    return _creation._make("eye", lambda xp, dt: xp.eye(rows, columns, k, dtype=dt), dtype, None)


def convert_to_tensor(x, dtype=None, sparse=None, ragged=None):
    """``x`` as a Tensor (see :func:`minikeras.ops.keras_names.convert_to_tensor`); ``ragged`` must be falsy."""
    if ragged is not None and validate_flag("convert_to_tensor", "ragged", ragged):
        raise ValueError("convert_to_tensor: ragged=True is not supported (minikeras has no ragged tensors).")
    return _keras_names.convert_to_tensor(x, dtype, sparse)
