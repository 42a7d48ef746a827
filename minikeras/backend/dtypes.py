"""Dtype names as Keras spells them, bfloat16 included.

NumPy has float16 but no bfloat16; ``ml_dtypes`` (the package JAX,
TensorFlow and Keras use) adds it as a NumPy dtype, and CuPy 14 accepts that
same dtype. It is imported on first need, so that ``import minikeras`` does
not pay for it. Its arrays have ``dtype.kind == "V"`` (not ``"f"``), which is
why code that asks "is this a float?" goes through :func:`is_float_dtype`
rather than testing ``kind``.

Example:
    >>> standardize_dtype("bfloat16"), standardize_dtype(float), is_float_dtype("bfloat16")
    ('bfloat16', 'float32', True)
"""
import numpy

#: The 16-bit float types of the mixed-precision policies.
HALF_DTYPES = ("float16", "bfloat16")

_FLOATS = ("float16", "bfloat16", "float32", "float64")
_ALLOWED = _FLOATS + ("bool", "uint8", "uint16", "uint32", "uint64", "int8", "int16", "int32", "int64",
                      "complex64", "complex128", "string")
_PYTHON_TYPES = {bool: "bool", int: "int64", float: "float32", str: "string", "int": "int64", "float": "float32"}
_bfloat16 = []


def bfloat16():
    """The bfloat16 NumPy dtype (from ``ml_dtypes``, imported on first use)."""
    if not _bfloat16:
        try:
            import ml_dtypes
        except ImportError:  # pragma: no cover - a declared dependency
            raise TypeError("bfloat16 needs the ml_dtypes package: pip install ml_dtypes.") from None
        _bfloat16.append(numpy.dtype(ml_dtypes.bfloat16))
    return _bfloat16[0]


def standardize_dtype(dtype):
    """The Keras name of ``dtype`` (``keras.backend.standardize_dtype``).

    Args:
        dtype: a name (``"float16"``, ``"bfloat16"``...), a NumPy/CuPy dtype or
            scalar type, a Python type (``float`` is float32, ``int`` int64),
            or None (``floatx()``, float32 by default).

    Returns:
        The dtype's name, e.g. ``"float32"``.

    Raises:
        ValueError: for anything that is not one of Keras's dtypes.
    """
    if dtype is None:
        from minikeras.backend.keras_helpers import floatx

        return floatx()
    if isinstance(dtype, (type, str)) and dtype in _PYTHON_TYPES:
        return _PYTHON_TYPES[dtype]
    name = dtype
    if not isinstance(dtype, str):
        name = getattr(dtype, "name", None)
        if not isinstance(name, str):
            try:
                name = numpy.dtype(dtype).name
            except TypeError:
                name = getattr(dtype, "__name__", None)
    if name not in _ALLOWED:
        raise ValueError(f"Invalid dtype: {dtype!r}. Expected one of {', '.join(_ALLOWED)}.")
    return name


def as_numpy_dtype(dtype):
    """``dtype`` as a NumPy dtype object (bfloat16 through ml_dtypes).

    Args:
        dtype: anything :func:`standardize_dtype` takes.
    """
    if isinstance(dtype, numpy.dtype):
        return dtype
    name = standardize_dtype(dtype)
    return bfloat16() if name == "bfloat16" else numpy.dtype(name)


def is_float_dtype(dtype):
    """True for float16, bfloat16, float32 and float64 (names or dtypes)."""
    name = dtype if isinstance(dtype, str) else getattr(dtype, "name", None)
    if not isinstance(name, str):
        try:
            name = numpy.dtype(dtype).name
        except TypeError:
            return False
    return name in _FLOATS


def is_half_dtype(dtype):
    """True for the 16-bit floats, float16 and bfloat16."""
    name = dtype if isinstance(dtype, str) else getattr(dtype, "name", None)
    return name in HALF_DTYPES
