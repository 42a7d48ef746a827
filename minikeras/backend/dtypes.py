"""Keras's dtype names and promotion, bfloat16 included: ``standardize_dtype``,
``result_type``, ``is_float_dtype``, ``is_int_dtype`` (``keras.backend`` /
``keras.utils``), and ``as_numpy_dtype`` for the arrays themselves.

NumPy has float16 but no bfloat16; ``ml_dtypes`` (the package JAX,
TensorFlow and Keras use) adds it as a NumPy dtype, and CuPy 14 accepts that
same dtype. It is imported on first need, so that ``import minikeras`` does
not pay for it. Its arrays have ``dtype.kind == "V"`` (not ``"f"``), which is
why code that asks "is this a float?" goes through :func:`is_float_dtype`
rather than testing ``kind``.

``result_type`` follows Keras's type-promotion lattice (adapted by Keras
from JAX): Python ``int``/``float`` are *weak* types that take the other
operand's kind (``result_type("bfloat16", int) == "bfloat16"``), mixed
signed/unsigned integers widen (``uint8`` with ``int8`` gives ``int16``),
an integer with a float gives that float. minikeras keeps ``int64`` and
``float64`` results, as Keras's TensorFlow backend does, since every
minikeras op runs in float64 too; Keras's JAX, torch and NumPy backends
narrow them to 32 bits. ``uint64`` results narrow to ``uint32`` on every
Keras backend, TensorFlow's included, and so here (``uint64`` with
``uint64`` gives ``uint32``; with a signed integer, ``float32``).
``ops.result_type`` and every op's promotion go through this one function
(tests/ops/test_result_type_table.py checks it against Keras 3.15).

Example:
    >>> standardize_dtype("bfloat16"), standardize_dtype(float), is_float_dtype("bfloat16")
    ('bfloat16', 'float32', True)
"""
import functools

import numpy

#: The 16-bit float types of the mixed-precision policies.
HALF_DTYPES = ("float16", "bfloat16")


BOOL_TYPES = ("bool",)
INT_TYPES = ("uint8", "uint16", "uint32", "uint64", "int8", "int16", "int32", "int64")
FLOAT_TYPES = ("bfloat16", "float16", "float32", "float64")
COMPLEX_TYPES = ("complex64", "complex128")
FLOAT8_TYPES = ("float8_e4m3fn", "float8_e5m2")
ALLOWED_DTYPES = ("float16", "float32", "float64", "uint8", "uint16", "uint32", "uint64", "int8", "int16", "int32",
                  "int64", "bfloat16", "bool", "string", "float8_e4m3fn", "float8_e5m2", "complex64", "complex128")
_PYTHON_TYPES = {bool: "bool", int: "int64", float: "float32", str: "string", "int": "int64",
                 complex: "complex128"}

# Each type and the types directly above it (weak "int"/"float" included).
_LATTICE = {
    "bool": ["int"], "int": ["uint8", "int8", "complex64"],
    "uint8": ["int16", "uint16"], "uint16": ["int32", "uint32"], "uint32": ["int64", "uint64"], "uint64": ["float"],
    "int8": ["int16"], "int16": ["int32"], "int32": ["int64"], "int64": ["float"],
    "float": ["bfloat16", "float16"], "bfloat16": ["float32"], "float16": ["float32"],
    "float32": ["float64", "complex64"], "float64": ["complex128"], "complex64": ["complex128"], "complex128": [],
}


def _upper_bounds():
    bounds = {node: {node} for node in _LATTICE}
    changed = True
    while changed:
        changed = False
        for node in _LATTICE:
            grown = bounds[node].union(*(_LATTICE[above] for above in bounds[node]))
            if grown != bounds[node]:
                bounds[node], changed = grown, True
    return bounds


_UPPER = _upper_bounds()


def _floatx():
    from minikeras.backend.keras_helpers import floatx

    return floatx()


def standardize_dtype(dtype):
    """Keras's canonical name of a dtype: ``"float32"`` for ``numpy.float32``,
    ``float``, ``"float32"``, a NumPy/CuPy dtype...; None gives ``floatx()``.

    Raises:
        ValueError: ``Invalid dtype: ...`` for a dtype Keras does not know.
    """
    if dtype is None:
        return _floatx()
    try:
        dtype = _PYTHON_TYPES.get(dtype, dtype)
    except TypeError:  # unhashable
        pass
    if hasattr(dtype, "name") and isinstance(dtype.name, str):
        dtype = dtype.name
    elif hasattr(dtype, "__name__"):
        dtype = dtype.__name__
    elif "torch" in str(dtype) or "jax.numpy" in str(dtype):
        dtype = str(dtype).split(".")[-1]
    if dtype not in ALLOWED_DTYPES and not isinstance(dtype, str):
        try:
            dtype = numpy.dtype(dtype).name
        except TypeError:
            pass
    if dtype not in ALLOWED_DTYPES:
        raise ValueError(f"Invalid dtype: {dtype}. Expected one of {', '.join(ALLOWED_DTYPES)}.")
    return dtype


@functools.lru_cache(maxsize=512)
def _least_upper_bound(*nodes):
    found = set(nodes)
    common = set.intersection(*(_UPPER[node] for node in found))
    least = (common & found) or {node for node in common if common <= _UPPER[node]}
    if len(least) != 1:
        raise ValueError(f"Input dtypes {tuple(nodes)} have no available implicit dtype promotion path. Try "
                         "explicitly casting inputs to the desired output type.")
    return least.pop()


def _weak(dtype):
    if dtype == "bool":
        return dtype
    return "float" if "float" in dtype else "int" if "int" in dtype else dtype


def result_type(*dtypes):
    """The dtype of an operation on ``dtypes`` under Keras's promotion rules.

    Args:
        *dtypes: dtypes, names, or the Python types ``int``/``float``/``bool``
            (weak: they adapt to the other operands). None means ``floatx()``.

    Returns:
        The dtype name; ``floatx()`` for no argument.

    Example:
        >>> result_type("int32", "float16")
        'float16'
        >>> result_type("bfloat16", int)
        'bfloat16'
    """
    if not dtypes:
        return _floatx()
    for dtype in dtypes:
        if isinstance(dtype, str) and dtype in FLOAT8_TYPES:
            raise ValueError(f"There is no implicit conversions from float8 dtypes to others. You must cast it "
                             f"internally. Received: {dtypes}")
    dtypes = [_floatx() if dtype is None else dtype for dtype in dtypes]
    names = [standardize_dtype(dtype) for dtype in dtypes]
    weak = [dtype is int or dtype is float for dtype in dtypes]
    if len(names) == 1:
        result, result_weak = names[0], weak[0]
    elif len(set(names)) == 1 and not all(weak):
        result, result_weak = names[0], False
    elif all(weak):
        result, result_weak = _least_upper_bound(*set(names)), True
    else:
        result = _least_upper_bound(*{_weak(name) if is_weak else name for name, is_weak in zip(names, weak)})
        result_weak = result in ("int", "float")
    if result_weak and result != "bool":
        precision = _floatx()[-2:]
        kind = "f" if result == "bfloat16" else result[:1]
        result = {"b": "bool", "i": f"int{precision}", "u": f"uint{precision}"}.get(kind, f"float{precision}")
    return _NARROWED.get(result, result)


# Keras narrows these on its TensorFlow backend too (its BIT64_TO_BIT32_DTYPE keeps only int64 and float64
# there). complex128 -> complex64 is Keras's as well but is not applied here yet (minikeras's complex ops keep 128).
_NARROWED = {"uint64": "uint32"}


_DTYPE_NAMES = {}  # numpy dtype -> its name: ``dtype.name`` is Python code in NumPy, asked several times per op


def _name(dtype):
    """The dtype's name, or None for what is not a dtype (never raises)."""
    if isinstance(dtype, numpy.dtype):
        name = _DTYPE_NAMES.get(dtype)
        if name is None:
            name = dtype.name
            if len(_DTYPE_NAMES) < 256:  # the few a program uses; never grows without bound
                _DTYPE_NAMES[dtype] = name
        return name
    name = dtype if isinstance(dtype, str) else getattr(dtype, "name", None)
    if not isinstance(name, str):
        try:
            name = numpy.dtype(dtype).name
        except TypeError:
            return None
    return name


def dtype_name(dtype):
    """``dtype.name`` (a string stays as is), remembered per NumPy dtype for
    hot paths; None for what is not a dtype."""
    return _name(dtype)


def is_float_dtype(dtype):
    """True for the float dtypes (``bfloat16``, ``float16``, ``float32``,
    ``float64``, float8), names or dtypes; False for anything else."""
    return _name(dtype) in _FLOAT_NAMES


_FLOAT_NAMES = frozenset(FLOAT_TYPES + FLOAT8_TYPES)  # asked for every layer call and op: one hash, no tuple


def is_int_dtype(dtype):
    """True for the signed and unsigned integer dtypes."""
    return _name(dtype) in INT_TYPES


def is_half_dtype(dtype):
    """True for the 16-bit floats, float16 and bfloat16."""
    return _name(dtype) in HALF_DTYPES


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


def as_numpy_dtype(dtype):
    """``dtype`` as a NumPy dtype object (bfloat16 through ml_dtypes).

    Args:
        dtype: anything :func:`standardize_dtype` takes.
    """
    if isinstance(dtype, numpy.dtype):
        return dtype
    name = standardize_dtype(dtype)
    if name == "string":  # Keras's name for text, which no numeric array holds
        raise TypeError("dtype 'string' (text) has no array dtype: tensors, weights and ops hold numbers. Text "
                        "goes in as NumPy arrays of str or bytes to the text layers (StringLookup, "
                        "TextVectorization, Hashing), which turn it into numbers.")
    return bfloat16() if name == "bfloat16" else numpy.dtype(name)


def finfo(dtype):
    """``numpy.finfo`` of a float dtype, bfloat16 included (NumPy's own
    refuses ml_dtypes' types; ``ml_dtypes.finfo`` answers for them)."""
    dtype = as_numpy_dtype(dtype)
    if dtype.kind == "V":
        import ml_dtypes

        return ml_dtypes.finfo(dtype)
    return numpy.finfo(dtype)
