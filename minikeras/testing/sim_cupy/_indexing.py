"""Out-of-range integer indices: CuPy 14.2 wraps them, the simulated CuPy too.

NumPy raises IndexError for an integer-array index out of range; CuPy takes
it modulo the axis length, silently (CuPy's "Differences between CuPy and
NumPy": out-of-bounds integer-array indices wrap around). Computing with
NumPy, the simulated GPU used to raise, so an op that relied on NumPy's
check passed the simulated-GPU suite and on an H100 read another row
(``take_along_axis``, 2026-11-26). The simulated array module now wraps
exactly where CuPy's sources (tag v14.2.0) do, and nowhere else:

- ``a[key]``, ``a[key] = value`` and ``ufunc.at(a, key, value)`` with
  integer arrays or lists in ``key``: cupy/_core/_routines_indexing.pyx
  sends one array to ``take`` / ``_scatter_op_single``, whose kernels take
  ``index % n``, and several through ``_prepare_multiple_array_indexing``
  ("wrap all out-of-bound indices"), each modulo its own axis. A Python or
  NumPy integer scalar is checked (``_view_getitem``: "Index ... is out of
  bounds"), as NumPy checks it; boolean masks have no range.
- ``take`` (function and method: cupy/_indexing/indexing.py,
  cupy/_core/core.pyx; there is no ``mode``) wraps, a scalar index too
  (``_take_kernel_scalar``).
- ``take_along_axis`` (cupy/_indexing/indexing.py) and ``put_along_axis``
  (cupy/lib/_shape_base.py) are fancy indexing.
- ``put`` defaults to ``mode='wrap'`` (cupy/_indexing/insert.py,
  ``ndarray.put`` in cupy/_core/core.pyx), NumPy to ``'raise'``; so does
  ``ravel_multi_index`` (cupy/_indexing/generate.py).
- ``compress`` takes the condition's nonzero positions
  (``_ndarray_compress``: "do not test condition.shape"): a condition
  longer than the axis wraps where NumPy raises.

Where CuPy checks as NumPy does, NumPy's check stands: ``choose`` (mode
``'raise'``: ValueError, "invalid entry in choice array"), ``unravel_index``
(ValueError), scalar indices, an index into an empty axis (IndexError).
tests/backend/test_sim_cupy_wrapping.py checks each case, and on a real
GPU the same assertions against CuPy itself.
"""
import numpy

__all__ = ["wrap_index", "FUNCTIONS", "METHODS"]


def _index_array(item):
    """``item`` as the array CuPy indexes with (lists, tuples, bools and
    arrays: ``_prepare_slice_list``), or None for a scalar, slice, None or
    Ellipsis."""
    if isinstance(item, numpy.ndarray):
        return item
    if isinstance(item, (list, tuple, bool, numpy.bool_)):
        try:
            return numpy.asarray(item)
        except ValueError:  # ragged: NumPy's own error follows
            return None
    return None


def _wrapped(indices, length):
    """Integer ``indices`` modulo ``length``, as CuPy's kernels take them
    (an empty axis is left to NumPy, which raises as CuPy does)."""
    array = numpy.asarray(indices)
    if length == 0 or array.dtype.kind not in "iu":
        return indices
    return numpy.mod(array.astype(numpy.intp, copy=False), length)


def wrap_index(shape, key):
    """``key`` with each integer array taken modulo the length of the axis
    it indexes in an array of ``shape``; other items unchanged."""
    items = list(key) if isinstance(key, tuple) else [key]
    arrays = [_index_array(item) for item in items]
    if not any(array is not None and array.dtype.kind in "iu" for array in arrays):
        return key
    consumed = sum(array.ndim if array is not None and array.dtype.kind == "b" else
                   0 if item is None or item is Ellipsis else 1
                   for item, array in zip(items, arrays))
    if consumed > len(shape):
        return key  # NumPy's "too many indices" (CuPy raises IndexError too)
    axis, wrapped = 0, []
    for item, array in zip(items, arrays):
        if item is Ellipsis:
            axis += len(shape) - consumed
        elif array is not None and array.dtype.kind == "b":
            axis += array.ndim
        elif item is not None:
            if array is not None and array.dtype.kind in "iu":
                item = _wrapped(array, shape[axis])
            axis += 1
        wrapped.append(item)
    return tuple(wrapped) if isinstance(key, tuple) else wrapped[0]


def _axis_length(a, axis):
    if axis is None:
        return a.size
    if -a.ndim <= axis < a.ndim:
        return a.shape[axis]
    return 0  # NumPy's AxisError follows


def take(a, indices, axis=None, out=None):
    return numpy.take(a, _wrapped(indices, _axis_length(a, axis)), axis=axis, out=out)


def take_along_axis(a, indices, axis):
    if axis is None:
        a, axis = a.ravel(), 0
    return numpy.take_along_axis(a, _wrapped(indices, _axis_length(a, axis)), axis)


def put_along_axis(arr, indices, values, axis):
    numpy.put_along_axis(arr, _wrapped(indices, _axis_length(arr, axis)), values, axis)


def put(a, indices, values, mode="wrap"):
    numpy.put(a, indices, values, mode=mode)


def compress(condition, a, axis=None, out=None):
    condition = numpy.asarray(condition)
    if condition.ndim != 1:
        return numpy.compress(condition, a, axis=axis, out=out)  # NumPy's error
    return take(a, numpy.nonzero(condition)[0], axis, out)


def ravel_multi_index(multi_index, dims, mode="wrap", order="C"):
    return numpy.ravel_multi_index(multi_index, dims, mode=mode, order=order)


#: Module functions whose CuPy 14.2 result differs from NumPy's on the same input.
FUNCTIONS = {"take": take, "take_along_axis": take_along_axis, "put_along_axis": put_along_axis, "put": put,
             "compress": compress, "ravel_multi_index": ravel_multi_index}

#: The same for ``cupy.ndarray`` methods (the array first).
METHODS = {
    "take": take,
    "put": put,
    "compress": lambda a, condition, axis=None, out=None: compress(condition, a, axis, out),
}
