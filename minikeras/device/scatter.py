"""``target[indices] = op(target[indices], values)`` with repeated indices
accumulating (NumPy's ``ufunc.at``), on a GPU array module, for every dtype.

CuPy 14.2's ``ufunc.at`` (``_scatter_op_single`` in
cupy/_core/_routines_indexing.pyx, v14.2.0) casts the values to the target's
dtype and refuses any target dtype CUDA has no atomic for: ``add.at`` takes
int32, int64, uint32, uint64, float16, float32 and float64;
``maximum.at``/``minimum.at`` the same without float16; and there is no
``multiply.at`` at all (``cupy/_core/_kernel.pyx``: "`cupy_multiply.at` is
not supported yet").

Other dtypes are accumulated in a wider supported dtype and cast back
(bool, int8/16, uint8/16 in 64-bit integers; float16 and bfloat16 in
float32; complex sums as real and imaginary parts in float64), which gives
NumPy's result (wrapping for small ints, logical or for bool; maximum and
minimum are exact in the wider dtype). Products of rows sharing an index
are taken by a segmented scan over the indices sorted (log2(n) steps of
elementwise kernels, no host synchronisation), in float32 for 16-bit floats;
so are float64 maxima and minima, which CuPy's atomics round to float32.

Floating sums through atomics land in a different order each run, so their
last bits change (``device/determinism.py``); after
``enable_op_determinism()`` floating scatter-adds take the same sorted
segmented scan instead (one fixed order of additions: bit-identical runs).
Integer sums, maxima and minima are exact in any order.
"""
import numpy

from minikeras.device import determinism

#: Target dtypes CuPy's add.at accepts.
SUPPORTED = frozenset(numpy.dtype(name) for name in
                      ("int32", "int64", "uint32", "uint64", "float16", "float32", "float64"))
#: Target dtypes CuPy's maximum.at and minimum.at accept.
SUPPORTED_MAX_MIN = SUPPORTED - {numpy.dtype("float16")}


def scatter_add(xp, target, indices, values):
    """``xp.add.at(target, indices, values)`` for any dtype (module docstring)."""
    dtype = numpy.dtype(target.dtype)
    if dtype.kind in "fcV" and determinism.enabled():
        _deterministic_add(xp, target, indices, values)
        return
    if dtype in SUPPORTED:
        xp.add.at(target, indices, values)
        return
    if dtype.kind == "c":
        values = xp.asarray(values)
        for part in ("real", "imag"):
            wide = getattr(target, part).astype(numpy.float64)
            xp.add.at(wide, indices, getattr(values, part).astype(numpy.float64))
            if part == "real":
                real = wide
        target[...] = real + 1j * wide
        return
    _widened(xp, "add", target, indices, values)


def scatter_reduce(xp, op, target, indices, values):
    """``xp.<op>.at(target, indices, values)`` for ``op`` in add, maximum,
    minimum and multiply, for any real dtype (module docstring). For
    multiply, ``indices`` is one integer array indexing ``target``'s first axis."""
    if op == "add":
        scatter_add(xp, target, indices, values)
    elif op == "multiply":
        _scatter_by_scan(xp, xp.multiply, target, indices, values)
    elif numpy.dtype(target.dtype) == numpy.float64:
        # CuPy 14.2's double atomicMax/atomicMin compare with fmaxf/fminf
        # (cupy/_core/include/cupy/atomics.cuh): every value they write is
        # rounded to float32 (seen on an H200). The scan is exact.
        _scatter_by_scan(xp, getattr(xp, op), target, indices, values)
    elif numpy.dtype(target.dtype) in SUPPORTED_MAX_MIN or numpy.dtype(target.dtype).kind == "c":
        getattr(xp, op).at(target, indices, values)  # complex: CuPy's own error
    else:
        _widened(xp, op, target, indices, values)


def _deterministic_add(xp, target, indices, values):
    """``add.at`` without atomics: the segmented scan over the sorted
    indices (``_scatter_by_scan``) on the first axis of ``target``; several
    index arrays become positions in its leading axes, flattened."""
    if isinstance(indices, tuple) and len(indices) == 1:
        indices = indices[0]
    if isinstance(indices, tuple):
        lead = tuple(target.shape[:len(indices)])
        wrapped = tuple(xp.where(i < 0, i + size, i) for i, size in zip(indices, lead))
        positions = xp.ravel_multi_index(xp.broadcast_arrays(*wrapped), lead).reshape(-1)
        flat = xp.ascontiguousarray(target).reshape((-1,) + tuple(target.shape[len(indices):]))
        _scatter_by_scan(xp, xp.add, flat, positions, values)
        target[...] = flat.reshape(target.shape)
        return
    indices = xp.asarray(indices).reshape(-1)
    _scatter_by_scan(xp, xp.add, target, xp.where(indices < 0, indices + target.shape[0], indices), values)


def _wide_dtype(dtype):
    if dtype.kind == "u":
        return numpy.dtype(numpy.uint64)
    return numpy.dtype(numpy.int64 if dtype.kind in "bi" else numpy.float32)


def _widened(xp, op, target, indices, values):
    dtype = numpy.dtype(target.dtype)
    wide_dtype = _wide_dtype(dtype)
    wide = target.astype(wide_dtype)
    getattr(xp, op).at(wide, indices, xp.asarray(values).astype(wide_dtype))
    if dtype.kind == "b":
        wide = wide != 0
    target[...] = wide.astype(dtype)


def _scatter_by_scan(xp, ufunc, target, indices, values):
    """``target[indices] = ufunc(target[indices], values)`` with repeated
    indices combining (``ufunc`` associative: multiply, maximum, minimum, add):
    the rows sorted by index, an inclusive segmented scan (Hillis-Steele:
    after the step of size ``d`` each row holds the combination of the ``2d``
    rows ending at it within its segment), then each segment's last row
    combines with the target's row; the other rows write to a spare row."""
    count = indices.shape[0]
    if count == 0:
        return
    dtype = numpy.dtype(target.dtype)
    work = numpy.dtype(numpy.float32) if dtype.itemsize == 2 and dtype.kind in "fV" else dtype
    values = xp.broadcast_to(xp.asarray(values).astype(work), (count,) + tuple(target.shape[1:]))
    order = xp.argsort(indices)
    ids = indices[order]
    products = values[order]
    column = (-1,) + (1,) * (products.ndim - 1)
    step = 1
    while step < count:
        same = (ids[step:] == ids[:-step]).reshape(column)
        tail = xp.where(same, ufunc(products[step:], products[:-step]), products[step:])
        products = xp.concatenate([products[:step], tail])
        step *= 2
    last = xp.concatenate([ids[1:] != ids[:-1], xp.ones(1, dtype=bool)])
    slots = xp.where(last, ids, target.shape[0])
    extended = xp.concatenate([target, target[:1]])
    extended[slots] = ufunc(target[ids].astype(work), products).astype(dtype)
    target[...] = extended[:-1]
