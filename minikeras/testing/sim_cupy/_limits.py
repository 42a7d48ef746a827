"""What CuPy 14.2 refuses where NumPy computes: the simulated CuPy's model.

The simulated CuPy (minikeras.testing.sim_cupy) runs NumPy underneath, and NumPy (with ml_dtypes) sorts,
scans and multiplies bfloat16, scatters any dtype with ``ufunc.at`` and
takes a Python bool as ``where``'s condition. CuPy does not, so code that
passed on the simulated GPU failed on a real one. Each check below raises
the error CuPy raises, with its message, for exactly the cases its source
(tag v14.2.0) refuses, and nothing more:

- ``matmul`` / ``@`` with more than 2 axes in bfloat16:
  ``cupy/_core/_routines_linalg.pyx`` ``matmul`` widens only float16
  (``dtype.char == 'e'``) and sends every dtype outside ``'efdFD'`` to the
  integer kernels, whose ``get_typename('E')`` fails: ``TypeError: data
  type 'E' not understood``. 2-D products (``dot``, ``tensordot``, ``matmul``
  of matrices) go to cuBLAS ``gemmEx``, which takes bfloat16.
- ``einsum`` contracting bfloat16 operands: ``cupy/linalg/_einsum.py``
  ``reduced_binary_einsum`` contracts two operands with ``cupy.matmul`` on
  3-axis arrays (the error above); products without a contracted label are
  elementwise and work. And an explicit output without ``...`` while an
  operand's ``...`` covers axes is refused (``options['sum_ellipsis']`` is
  False), where NumPy's ``optimize=True`` path sums those axes.
- sorting bfloat16: ``cupy/cuda/thrust.pyx`` ``sort``/``argsort`` raise
  NotImplementedError (``lexsort`` TypeError) for any dtype outside
  ``cupy/cuda/common.pyx`` ``_get_dtype_id`` (bool, the 8/16/32/64-bit
  integers, float16/32/64, complex64/128). ``partition``/``argpartition``
  (``cupy/_core/_routines_sorting.pyx``) fall back to that sort for short
  rows; ``unique`` (``cupy/_manipulation/add_remove.py`` ``_unique_1d``)
  sorts or argsorts.
- ``cumsum``/``cumprod`` in bfloat16: every scan kernel of
  ``cupy/_core/_routines_math.pyx`` updates with ``x += y`` / ``x *= y``,
  and CuPy's ``bfloat16`` class (``cupy/_core/include/cupy/bfloat16.cuh``)
  has no compound assignment (``float16.cuh``'s has): NVRTC fails to
  compile (``CompileException``).
- ``ufunc.at``: ``cupy/_core/_kernel.pyx`` ``ufunc.at`` exists only for the
  ufuncs with a scatter op (add, subtract, maximum, minimum, bitwise
  and/or/xor), others raise NotImplementedError ``cupy_<name>.at``; with an
  integer-array index, ``cupy/_core/_routines_indexing.pyx``
  ``_scatter_op_single`` accepts only the target dtypes listed in its
  messages. ``reduce``/``accumulate`` exist for add and multiply only,
  ``reduceat`` for add only.
- ``where(condition, x, y)`` calls ``condition.astype`` (``cupy/_sorting/
  search.py``): a Python bool or list condition is an AttributeError.

tests/backend/test_sim_cupy_limits.py checks each refusal and its
message (and, on a real GPU, CuPy's); minikeras computes these cases in
float32 (or by other means) so that they run on a real GPU.
"""
import numpy

from minikeras.testing.sim_cupy.cuda.compiler import CompileException

__all__ = []

_THRUST_DTYPES = frozenset(numpy.dtype(name) for name in (
    "bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64",
    "float16", "float32", "float64", "complex64", "complex128"))

# _scatter_op_single's accepted dtypes, per scatter op, with its message.
_AT_DTYPES = {
    "add": ("int32 int64 float16 float32 float64 uint32 uint64",
            "int32, int64, float16, float32, float64, uint32, uint64"),
    "subtract": ("int32 uint32", "int32, uint32,"),
    "maximum": ("int32 int64 float32 float64 uint32 uint64", "int32, int64, float32, float64, uint32, uint64"),
    "minimum": ("int32 int64 float32 float64 uint32 uint64", "int32, int64, float32, float64, uint32, uint64"),
    "bitwise_and": ("int32 int64 uint32 uint64", "int32, int64, uint32, uint64"),
    "bitwise_or": ("int32 int64 uint32 uint64", "int32, int64, uint32, uint64"),
    "bitwise_xor": ("int32 int64 uint32 uint64", "int32, int64, uint32, uint64"),
}
_AT_DTYPES = {name: (frozenset(numpy.dtype(d) for d in dtypes.split()), listed)
              for name, (dtypes, listed) in _AT_DTYPES.items()}
_UFUNC_METHODS = {"reduce": ("add", "multiply"), "accumulate": ("add", "multiply"), "reduceat": ("add",)}


def _is_bfloat16(dtype):
    return dtype is not None and numpy.dtype(dtype).name == "bfloat16"


def _dtype(value):
    return getattr(value, "dtype", None) if hasattr(value, "shape") else None


def _sort_refused(dtype, what="arrays"):
    return NotImplementedError(f"Sorting {what} with dtype '{numpy.dtype(dtype)}' is not supported")


# --------------------------------------------------------------- products
def check_matmul(a, b):
    """``cupy.matmul(a, b)`` / ``a @ b`` (module docstring)."""
    dtype_a, dtype_b = _dtype(a), _dtype(b)
    if dtype_a is None or dtype_b is None or max(a.ndim, b.ndim) <= 2 or not a.size or not b.size:
        return
    if _is_bfloat16(numpy.promote_types(dtype_a, dtype_b)):
        raise TypeError("data type 'E' not understood")


def check_einsum(args):
    """``cupy.einsum(subscripts, *operands)`` (module docstring)."""
    if not args or not isinstance(args[0], str):
        return
    operands = args[1:]
    text = args[0].replace(" ", "")
    inputs, arrow, output = text.partition("->")
    terms = inputs.split(",")
    if len(terms) != len(operands) or not all(hasattr(op, "ndim") for op in operands):
        return  # NumPy reports the malformed call
    covers_axes = any("..." in term and operand.ndim > len(term.replace("...", ""))
                      for term, operand in zip(terms, operands))
    if arrow and "..." not in output and covers_axes:
        raise ValueError("output has more dimensions than subscripts given in einstein sum, but no '...' "
                         "ellipsis provided to broadcast the extra dimensions.")
    if len(operands) < 2 or not _is_bfloat16(numpy.result_type(*[op.dtype for op in operands])):
        return
    letters = [set(term.replace("...", "")) for term in terms]
    if not arrow:  # implicit output: the labels named once
        output = "".join(label for label in set().union(*letters)
                         if sum(label in term for term in letters) == 1)
    contracted = [label for label in set().union(*letters)
                  if label not in output and sum(label in term for term in letters) >= 2]
    if contracted:
        raise TypeError("data type 'E' not understood")


# ---------------------------------------------------------------- sorting
def _axis_length(array, axis):
    if axis is None:
        return array.size
    return array.shape[axis] if array.ndim else 0


def check_sort(array, axis=-1):
    """``cupy.sort`` / ``ndarray.sort``: thrust sorts rows longer than 1."""
    if array.dtype not in _THRUST_DTYPES and array.ndim and _axis_length(array, axis) > 1:
        raise _sort_refused(array.dtype)


def check_argsort(array):
    """``cupy.argsort`` / ``ndarray.argsort``: always thrust."""
    if array.dtype not in _THRUST_DTYPES:
        raise _sort_refused(array.dtype)


def _partition_sorts(array, kth, axis, arg):
    """Whether (arg)partition falls back to a full (arg)sort (_routines_sorting.pyx)."""
    length = _axis_length(array, axis)
    if not length:
        return False
    kths = (kth,) if isinstance(kth, (int, numpy.integer)) else tuple(kth)
    max_k = max([int(k) + length if int(k) < 0 else int(k) for k in kths] + [0])
    max_k = max(32, 1 << max_k.bit_length())
    size = array.size if axis is not None else length
    blocks = 512
    while blocks > 0 and length // blocks < max_k + 32 * 4:
        blocks //= 2
    blocks *= size // length
    return length < 32 or max_k >= 1024 or (blocks < 1 if arg else blocks <= 32)


def check_partition(array, kth, axis=-1, arg=False):
    """``cupy.partition`` / ``argpartition`` (and the methods)."""
    if array.dtype in _THRUST_DTYPES or not array.ndim or not _partition_sorts(array, kth, axis, arg):
        return
    if arg or _axis_length(array, axis) > 1:
        raise _sort_refused(array.dtype)


def check_lexsort(keys):
    """``cupy.lexsort``: 2-D keys go to thrust (1-D ones return at once)."""
    dtype = _dtype(keys)
    if dtype is not None and keys.ndim == 2 and dtype not in _THRUST_DTYPES:
        raise TypeError(f"Sorting keys with dtype '{dtype}' is not supported")


def check_unique(array, return_index=False, return_inverse=False, axis=None):
    """``cupy.unique`` without ``axis`` argsorts (index/inverse asked) or sorts."""
    if axis is None and array.dtype not in _THRUST_DTYPES and (return_index or return_inverse or array.size > 1):
        raise _sort_refused(array.dtype)


# ------------------------------------------------------------------- scans
def check_scan(name, array, dtype=None, out=None):
    """``cupy.cumsum`` / ``cumprod`` (and the methods, ``add.accumulate``...):
    the scan runs in ``out``'s dtype, else ``dtype``, else the input's
    (bool and integers widened to 64 bits)."""
    scan_dtype = _dtype(out) if out is not None else dtype if dtype is not None else array.dtype
    if _is_bfloat16(scan_dtype):
        op = "+=" if name in ("cumsum", "nancumsum", "add") else "*="
        raise CompileException(
            f"/tmp/cupy_scan.cubin.cu: error: no operator \"{op}\" matches these operands\n"
            f"            operand types are: bfloat16 {op} bfloat16\n(simulated CuPy: CuPy 14.2's scan kernels "
            "use compound assignment, which its bfloat16 class lacks)", "", f"cupy_{name}", ())


# ------------------------------------------------------------------ ufuncs
def _has_integer_array(indices):
    """Whether ``ufunc.at``'s ``indices`` take the integer-array path
    (``_scatter_op_single``) rather than a boolean mask or basic slicing."""
    parts = indices if isinstance(indices, tuple) else (indices,)
    for part in parts:
        if isinstance(part, list):
            return True
        kind = getattr(_dtype(part), "kind", None)
        if kind in ("i", "u"):
            return True
    return False


def check_ufunc_method(name, method, args, kwargs):
    """``cupy.<name>.<method>(...)`` (module docstring)."""
    if method == "at":
        if name not in _AT_DTYPES:
            raise NotImplementedError(f"`cupy_{name}.at` is not supported yet")
        target = args[0] if args else kwargs.get("a")
        indices = args[1] if len(args) > 1 else kwargs.get("indices")
        accepted, listed = _AT_DTYPES[name]
        dtype = _dtype(target)
        if dtype is not None and dtype not in accepted and _has_integer_array(indices):
            raise TypeError(f"cupy.{name}.at only supports {listed} as data type")
        return
    allowed = _UFUNC_METHODS.get(method)
    if allowed is not None and name not in allowed:
        raise NotImplementedError(f"`cupy_{name}.{method}` is not supported yet")
    if method == "accumulate" and args:
        check_scan(name, args[0], kwargs.get("dtype"), kwargs.get("out"))


# ------------------------------------------------------------------- where
def check_where(args, kwargs):
    condition = args[0] if args else kwargs.get("condition")
    given = len(args) + sum(key in kwargs for key in ("x", "y"))
    if given >= 3 and not hasattr(condition, "shape"):
        raise AttributeError(f"'{type(condition).__name__}' object has no attribute 'astype'")


# --------------------------------------------------------------- dispatch
def _arg(args, kwargs, index, name, default=None):
    return args[index] if len(args) > index else kwargs.get(name, default)


def check_function(name, args, kwargs):
    """Raise CuPy's error for ``cupy.<name>(*args, **kwargs)`` where CuPy
    refuses it (module docstring); the checks read shapes and dtypes only.
    Calls without an array first argument are left to NumPy's own checks."""
    check = _FUNCTIONS.get(name)
    if check is not None and (name in _ANY_FIRST or (args and hasattr(args[0], "shape"))):
        check(args, kwargs)


def check_method(name, array, args, kwargs):
    """The same for the method ``array.<name>(*args, **kwargs)``."""
    check = _METHODS.get(name)
    if check is not None:
        check((array,) + tuple(args), kwargs)


def _scan_call(name):
    return lambda args, kwargs: check_scan(name, args[0], _arg(args, kwargs, 2, "dtype"), _arg(args, kwargs, 3, "out"))


_ANY_FIRST = frozenset({"einsum", "where"})  # subscripts, or a condition that may be a number
_FUNCTIONS = {
    "matmul": lambda args, kwargs: check_matmul(args[0], args[1]) if len(args) > 1 else None,
    "einsum": lambda args, kwargs: check_einsum(args),
    "sort": lambda args, kwargs: check_sort(args[0], _arg(args, kwargs, 1, "axis", -1)),
    "argsort": lambda args, kwargs: check_argsort(args[0]),
    "partition": lambda args, kwargs: check_partition(args[0], _arg(args, kwargs, 1, "kth"),
                                                      _arg(args, kwargs, 2, "axis", -1)),
    "argpartition": lambda args, kwargs: check_partition(args[0], _arg(args, kwargs, 1, "kth"),
                                                         _arg(args, kwargs, 2, "axis", -1), arg=True),
    "lexsort": lambda args, kwargs: check_lexsort(args[0]),
    "unique": lambda args, kwargs: check_unique(args[0], _arg(args, kwargs, 1, "return_index", False),
                                                _arg(args, kwargs, 2, "return_inverse", False),
                                                _arg(args, kwargs, 4, "axis")),
    "cumsum": _scan_call("cumsum"),
    "cumprod": _scan_call("cumprod"),
    "nancumsum": _scan_call("cumsum"),
    "nancumprod": _scan_call("cumprod"),
    "where": check_where,
}
_METHODS = {
    "sort": lambda args, kwargs: check_sort(args[0], _arg(args, kwargs, 1, "axis", -1)),
    "argsort": _FUNCTIONS["argsort"],
    "partition": _FUNCTIONS["partition"],
    "argpartition": _FUNCTIONS["argpartition"],
    "cumsum": lambda args, kwargs: check_scan("cumsum", args[0], _arg(args, kwargs, 2, "dtype"),
                                              _arg(args, kwargs, 3, "out")),
    "cumprod": lambda args, kwargs: check_scan("cumprod", args[0], _arg(args, kwargs, 2, "dtype"),
                                               _arg(args, kwargs, 3, "out")),
}
