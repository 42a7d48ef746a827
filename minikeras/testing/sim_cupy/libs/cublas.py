"""cuBLAS at the boundary ``minikeras.device.cublas_direct`` calls it: the
ctypes functions ``cublasSgemm_v2`` / ``cublasDgemm_v2`` of libcublas, and
CuPy's wrapper's ``setStream`` / ``setPointerMode`` (cupy_backends/cuda/
libs/cublas.pyx, v14.2.0) on the handles of ``cupy.cuda.device``.

What the real library does and refuses, the double does and refuses:

- column-major GEMM, ``C = alpha op(A) op(B) + beta C``, reading and
  writing the device memory the pointers name (a pointer outside a live
  allocation is refused: on a GPU it is an illegal address);
- ``CUBLAS_STATUS_INVALID_VALUE`` (7) for a negative size, an unknown
  operation or a leading dimension below the rows it spans;
  ``CUBLAS_STATUS_NOT_INITIALIZED`` (1) for an unknown handle;
- the GEMM runs on the handle's stream (``setStream``), as a kernel there:
  ordered, raced, counted and, on a capturing stream, captured;
- CuPy's ``setStream`` refuses a capturing stream with
  ``NotImplementedError`` (its TODO: cuBLAS supports capture, CuPy does not
  yet), which is why the library points its handle at the capture's stream
  before the capture begins.
"""
import types

import numpy
from numpy.lib.stride_tricks import as_strided

from minikeras.testing.sim_cupy import _calls
from minikeras.testing.sim_cupy._errors import CUBLASError
from minikeras.testing.sim_cupy.cuda import device, memory, stream as stream_module

CUBLAS_POINTER_MODE_HOST = 0
CUBLAS_POINTER_MODE_DEVICE = 1
CUBLAS_OP_N, CUBLAS_OP_T, CUBLAS_OP_C = 0, 1, 2
_SUCCESS, _NOT_INITIALIZED, _INVALID_VALUE = 0, 1, 7


def _value(argument):
    """A ctypes argument's Python value (ints pass as they are)."""
    if isinstance(argument, int):
        return argument
    return getattr(argument, "value", argument) or 0


def _handle(argument):
    return device._handle_of(_value(argument))


def setStream(handle, stream):
    """CuPy's ``cublas.setStream(handle, stream)``."""
    target = stream_module._from_pointer(stream)
    if target is not None and target.capture is not None:
        raise NotImplementedError("calling cuBLAS API during stream capture is currently unsupported")
    found = device._handle_of(handle)
    if found is None:
        raise CUBLASError(_NOT_INITIALIZED)
    found.stream = stream


def setPointerMode(handle, mode):
    """CuPy's ``cublas.setPointerMode(handle, mode)``."""
    found = device._handle_of(handle)
    if found is None or mode not in (CUBLAS_POINTER_MODE_HOST, CUBLAS_POINTER_MODE_DEVICE):
        raise CUBLASError(_NOT_INITIALIZED if found is None else _INVALID_VALUE)
    found.pointer_mode = mode


wrapper = types.SimpleNamespace(setStream=setStream, setPointerMode=setPointerMode, CUBLASError=CUBLASError,
                                CUBLAS_POINTER_MODE_HOST=CUBLAS_POINTER_MODE_HOST,
                                CUBLAS_POINTER_MODE_DEVICE=CUBLAS_POINTER_MODE_DEVICE)


def _scalar(argument, mode, dtype):
    if mode == CUBLAS_POINTER_MODE_HOST:
        return dtype.type(argument._obj.value)
    return memory._host_view(_value(argument), 1, dtype)[0]


def _matrix(pointer, rows, columns, leading, dtype):
    """A column-major ``rows`` x ``columns`` matrix at ``pointer`` (leading
    dimension ``leading``) as a strided NumPy view, and its block."""
    count = (columns - 1) * leading + rows if rows and columns else 0
    block, _ = memory._block_at(pointer, max(count, 1) * dtype.itemsize)
    flat = memory._host_view(pointer, count, dtype)
    return as_strided(flat, (rows, columns), (dtype.itemsize, leading * dtype.itemsize)), block


def _gemm(dtype, name):
    dtype = numpy.dtype(dtype)

    def gemm(handle, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc):
        found = _handle(handle)
        if found is None:
            return _NOT_INITIALIZED
        m, n, k, lda, ldb, ldc = (_value(v) for v in (m, n, k, lda, ldb, ldc))
        transa, transb = _value(transa), _value(transb)
        if min(m, n, k) < 0 or transa not in (0, 1, 2) or transb not in (0, 1, 2):
            return _INVALID_VALUE
        shape_a = (m, k) if transa == CUBLAS_OP_N else (k, m)
        shape_b = (k, n) if transb == CUBLAS_OP_N else (n, k)
        if lda < max(1, shape_a[0]) or ldb < max(1, shape_b[0]) or ldc < max(1, m):
            return _INVALID_VALUE
        if m == 0 or n == 0:
            return _SUCCESS
        alpha = _scalar(alpha, found.pointer_mode, dtype)
        beta = _scalar(beta, found.pointer_mode, dtype)
        c, block_c = _matrix(_value(C), m, n, ldc, dtype)
        reads, operands = [], []
        for pointer, shape, leading, op in ((A, shape_a, lda, transa), (B, shape_b, ldb, transb)):
            if k == 0:
                operands.append(None)
                continue
            matrix, block = _matrix(_value(pointer), shape[0], shape[1], leading, dtype)
            operands.append(matrix if op == CUBLAS_OP_N else matrix.T)
            reads.append(block)
        if beta != 0:
            reads.append(block_c)
        stream = stream_module._from_pointer(found.stream)
        if stream is None or stream.ptr in (0, 1):
            raise RuntimeError(f"Simulated cuBLAS: {name} on the legacy default stream (the handle's stream was "
                               "never set): minikeras points its handle at its own stream first "
                               "(cublas_direct.prepare).")

        def compute():
            product = numpy.zeros((m, n), dtype) if k == 0 else operands[0] @ operands[1]
            c[...] = alpha * product + (beta * c if beta != 0 else 0)

        _calls.issue(stream, name, reads, [block_c], compute)
        return _SUCCESS

    gemm.__name__ = name
    return gemm


library = types.SimpleNamespace(cublasSgemm_v2=_gemm("float32", "cublasSgemm_v2"),
                                cublasDgemm_v2=_gemm("float64", "cublasDgemm_v2"))
