"""``target[indices] += values`` with repeated indices accumulating, on a
GPU array module, for every dtype.

CuPy's ``add.at`` (``_scatter_op_single`` in cupy/_core/_routines_indexing.pyx,
v14.2.0) casts the values to the target's dtype and refuses any target
dtype CUDA has no ``atomicAdd`` for: only int32, int64, uint32, uint64,
float16, float32 and float64 are accepted ("cupy.add.at only supports ...").
Other dtypes are accumulated in a wider supported dtype and cast back
(bool, int8/16, uint8/16 in int64; bfloat16 in float32; complex as its real
and imaginary parts in float64), which gives NumPy's ``add.at`` result
(wrapping for small ints, logical or for bool).
"""
import numpy

#: Target dtypes CuPy's add.at accepts.
SUPPORTED = frozenset(numpy.dtype(name) for name in
                      ("int32", "int64", "uint32", "uint64", "float16", "float32", "float64"))


def scatter_add(xp, target, indices, values):
    """``xp.add.at(target, indices, values)`` for any dtype (module docstring)."""
    dtype = numpy.dtype(target.dtype)
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
    wide_dtype = numpy.int64 if dtype.kind in "biu" else numpy.float32
    wide = target.astype(wide_dtype)
    xp.add.at(wide, indices, xp.asarray(values).astype(wide_dtype))
    if dtype.kind == "b":
        wide = wide != 0
    target[...] = wide.astype(dtype)
