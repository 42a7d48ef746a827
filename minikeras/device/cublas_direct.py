"""cuBLAS's GEMM called directly, for the matrix products of a CUDA graph capture.

CuPy 14.2 refuses every cuBLAS call while a stream captures: its wrappers set
the handle's stream before each call, and ``cublas.setStream`` raises
``NotImplementedError('calling cuBLAS API during stream capture is currently
unsupported')`` (cupy_backends/cuda/libs/cublas.pyx, with a TODO noting that
cuBLAS itself supports capture since CUDA 11.5; seen on an H200). So while a
GPU captures (``device/graph.py``), ``GpuDevice.gemm`` calls
``cublasSgemm_v2`` / ``cublasDgemm_v2`` of the libcublas CuPy loaded, through
ctypes, on CuPy's own handle, whose stream and host pointer mode
:func:`prepare` set before the capture begins (outside it CuPy's wrappers may
still do so). Scalars ``alpha``/``beta`` are host values, baked into the
graph (they are the constants 1 and 0).

A row-major ``a (m, k) @ b (k, n)`` is the column-major ``C^T = B^T A^T``:
a C-contiguous operand is passed as is (op N), an F-contiguous one (a
transposed view, as ``kernel.T`` in a backward pass) as op T, anything else
is made contiguous first. float32 and float64 only; the default math mode
(no TF32, as ``CUPY_TF32=0``).

The library and CuPy's cuBLAS wrapper come from ``device/native.py``: the
process's, or the double a simulated CuPy provides for itself.
"""
import ctypes
import functools

import numpy

from minikeras.device import native
from minikeras.device.graph import GraphCaptureError

_OP_N, _OP_T = 0, 1
_FUNCTIONS = {"float32": ("cublasSgemm_v2", ctypes.c_float), "float64": ("cublasDgemm_v2", ctypes.c_double)}


def _library(cupy):
    """The libcublas of ``cupy``: a double it provides, or the process's."""
    return native.provided(cupy, "cublas") or _process_library()


def _wrapper(cupy):
    """CuPy's cuBLAS wrapper module (``setStream``, ``setPointerMode``)."""
    double = native.provided(cupy, "cupy_cublas")
    if double is not None:
        return double
    from cupy_backends.cuda.libs import cublas

    return cublas


@functools.lru_cache(maxsize=None)
def _process_library():
    """The libcublas CuPy has loaded (found in the process's memory map)."""
    import cupy_backends.cuda.libs.cublas  # noqa: F401  (loads libcublas)

    try:
        with open("/proc/self/maps") as maps:
            paths = sorted({line.split()[-1] for line in maps
                            if line.split()[-1].rsplit("/", 1)[-1].startswith("libcublas.so")})
    except OSError:
        paths = []
    if not paths:
        raise GraphCaptureError("cuBLAS cannot be called directly here (libcublas is not in the process's memory "
                                "map), and CuPy refuses cuBLAS during a capture.")
    library = ctypes.CDLL(paths[0])
    for name, _ in _FUNCTIONS.values():
        getattr(library, name).restype = ctypes.c_int
    return library


def prepare(cupy, stream):
    """Point CuPy's cuBLAS handle of the current device at ``stream`` (the
    capture's), host pointer mode, before the capture begins; and run one
    tiny product there, so that cuBLAS makes that stream's workspace now."""
    cublas = _wrapper(cupy)
    handle = cupy.cuda.device.get_cublas_handle()
    cublas.setStream(handle, stream.ptr)
    cublas.setPointerMode(handle, cublas.CUBLAS_POINTER_MODE_HOST)
    with stream:
        one = cupy.ones((1, 1), cupy.float32)
        gemm(cupy, one, one, cupy.empty((1, 1), cupy.float32))


def _operand(xp, array):
    """``(op, leading dimension, array)`` of a row-major 2-D operand."""
    if array.flags.c_contiguous:
        return _OP_N, max(1, array.shape[1]), array
    if array.flags.f_contiguous:
        return _OP_T, max(1, array.shape[0]), array
    array = xp.ascontiguousarray(array)
    return _OP_N, max(1, array.shape[1]), array


def gemm(xp, a, b, out=None):
    """``a @ b`` for 2-D float32/float64 arrays of one dtype, into ``out``
    (C-contiguous, or a new array), on the current stream of CuPy's handle."""
    dtype = numpy.dtype(a.dtype).name
    if a.ndim != 2 or b.ndim != 2 or b.dtype != a.dtype or dtype not in _FUNCTIONS:
        raise GraphCaptureError(f"a matrix product of {a.dtype} {a.shape} and {b.dtype} {b.shape} cannot be "
                                "captured: CuPy refuses cuBLAS during a capture, and the direct path takes 2-D "
                                "float32/float64 products only.")
    m, k = a.shape
    n = b.shape[1]
    target = out if out is not None and out.flags.c_contiguous else xp.empty((m, n), a.dtype)
    if m and n:
        if not k:
            target.fill(0)
        else:
            op_b, ld_b, b = _operand(xp, b)
            op_a, ld_a, a = _operand(xp, a)
            name, scalar = _FUNCTIONS[dtype]
            alpha, beta = scalar(1.0), scalar(0.0)
            handle = xp.cuda.device.get_cublas_handle()
            status = getattr(_library(xp), name)(
                ctypes.c_void_p(handle), op_b, op_a, n, m, k, ctypes.byref(alpha), ctypes.c_void_p(b.data.ptr), ld_b,
                ctypes.c_void_p(a.data.ptr), ld_a, ctypes.byref(beta), ctypes.c_void_p(target.data.ptr), n)
            if status != 0:
                raise GraphCaptureError(f"{name} failed during a capture (cuBLAS status {status}).")
    if out is not None and target is not out:
        out[...] = target
        return out
    return target
