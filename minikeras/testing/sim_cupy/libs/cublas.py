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

``cublasGemmEx`` / ``cublasGemmStridedBatchedEx`` (cublas_api.h, CUDA 13)
take the operands' ``cudaDataType`` and a ``cublasComputeType_t``; the
double takes the float combinations of cuBLAS's table and refuses the rest
with ``CUBLAS_STATUS_NOT_SUPPORTED`` (15): float16 or bfloat16 inputs with
their own type or float32 out under ``CUBLAS_COMPUTE_32F``; float32 under
``CUBLAS_COMPUTE_32F`` / ``_PEDANTIC`` / ``_FAST_TF32`` / ``_FAST_16F`` /
``_FAST_16BF``; float64 under ``CUBLAS_COMPUTE_64F``; an unknown algorithm
or a negative ``batchCount`` is ``CUBLAS_STATUS_INVALID_VALUE``, and so are
the sizes and leading dimensions Sgemm refuses. A pointer not aligned to its
element's size is refused as the misaligned address it is on a GPU. It
computes in float32 (float64 for ``CUBLAS_COMPUTE_64F``) and rounds to the
output type once; ``CUBLAS_COMPUTE_32F_FAST_TF32`` first rounds float32
inputs to TF32 (10 mantissa bits, to nearest even: the card's rounding is
not documented, so tests assert no more than "not exact float32"). Every
GEMM is logged in :data:`calls` (name, types, compute type, sizes), so
tests can assert what a layer issued.
"""
import ctypes
import types

import ml_dtypes
import numpy
from numpy.lib.stride_tricks import as_strided

from minikeras.testing.sim_cupy import _calls
from minikeras.testing.sim_cupy._errors import CUBLASError
from minikeras.testing.sim_cupy.cuda import device, memory, stream as stream_module
from minikeras.testing.sim_cupy.libs import _boundary

CUBLAS_POINTER_MODE_HOST = 0
CUBLAS_POINTER_MODE_DEVICE = 1
CUBLAS_OP_N, CUBLAS_OP_T, CUBLAS_OP_C = 0, 1, 2
_SUCCESS, _NOT_INITIALIZED, _INVALID_VALUE, _NOT_SUPPORTED = 0, 1, 7, 15
CUDA_R_32F, CUDA_R_64F, CUDA_R_16F, CUDA_R_16BF = 0, 1, 2, 14
COMPUTE_32F, COMPUTE_32F_PEDANTIC, COMPUTE_32F_FAST_16F, COMPUTE_32F_FAST_16BF = 68, 69, 74, 75
COMPUTE_32F_FAST_TF32, COMPUTE_64F = 77, 70
_DTYPES = {CUDA_R_32F: numpy.dtype("float32"), CUDA_R_64F: numpy.dtype("float64"),
           CUDA_R_16F: numpy.dtype("float16"), CUDA_R_16BF: numpy.dtype(ml_dtypes.bfloat16)}
_SUPPORTED = {  # (A = B type, C type) per compute type: cuBLAS's cublasGemmEx table, real floats
    COMPUTE_32F: {(CUDA_R_16F, CUDA_R_16F), (CUDA_R_16F, CUDA_R_32F), (CUDA_R_16BF, CUDA_R_16BF),
                  (CUDA_R_16BF, CUDA_R_32F), (CUDA_R_32F, CUDA_R_32F)},
    COMPUTE_32F_PEDANTIC: {(CUDA_R_32F, CUDA_R_32F)},
    COMPUTE_32F_FAST_16F: {(CUDA_R_32F, CUDA_R_32F)},
    COMPUTE_32F_FAST_16BF: {(CUDA_R_32F, CUDA_R_32F)},
    COMPUTE_32F_FAST_TF32: {(CUDA_R_32F, CUDA_R_32F)},
    COMPUTE_64F: {(CUDA_R_64F, CUDA_R_64F)},
}
# cublasGemmAlgo_t: CUBLAS_GEMM_DEFAULT (-1), _ALGO0.._ALGO23, _DEFAULT_TENSOR_OP (99).._ALGO15_TENSOR_OP (115),
# and cuBLAS 13's CUBLAS_GEMM_AUTOTUNE (999).
_ALGORITHMS = frozenset(range(-1, 24)) | frozenset(range(99, 116)) | {999}

calls = []  # every GEMM issued: dicts of name, a/b/c dtype names, compute type, m, n, k, batch


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

        calls.append({"name": name, "a": dtype.name, "b": dtype.name, "c": dtype.name, "compute": None,
                      "m": m, "n": n, "k": k, "batch": 1})
        _calls.issue(stream, name, reads, [block_c], compute)
        return _SUCCESS

    gemm.__name__ = name
    return gemm


def to_tf32(array):
    """float32 values rounded to TF32 (10 mantissa bits, to nearest even);
    infinities and NaNs kept."""
    array = numpy.ascontiguousarray(array, numpy.float32)
    bits = array.view(numpy.uint32)
    rounded = ((bits + numpy.uint32(0xFFF) + ((bits >> 13) & 1)) & numpy.uint32(0xFFFFE000)).view(numpy.float32)
    return numpy.where(numpy.isfinite(array), rounded, array)


def _aligned(pointer, dtype, name):
    if pointer % dtype.itemsize:
        raise ValueError(f"Simulated CUDA: {name} was given the address {pointer:#x}, not aligned to its "
                         f"{dtype.itemsize}-byte elements: a misaligned address on a GPU.")


def _gemm_ex(name, batched):
    """cublasGemmEx, or cublasGemmStridedBatchedEx (``batched``)."""

    def gemm_ex(handle, transa, transb, m, n, k, alpha, *rest):
        if batched:
            (A, a_type, lda, stride_a, B, b_type, ldb, stride_b, beta, C, c_type, ldc, stride_c, count,
             compute, algo) = rest
        else:
            A, a_type, lda, B, b_type, ldb, beta, C, c_type, ldc, compute, algo = rest
            stride_a = stride_b = stride_c = 0
            count = 1
        found = _handle(handle)
        if found is None:
            return _NOT_INITIALIZED
        m, n, k, lda, ldb, ldc, count = (_value(v) for v in (m, n, k, lda, ldb, ldc, count))
        stride_a, stride_b, stride_c = (_value(v) for v in (stride_a, stride_b, stride_c))
        transa, transb, compute, algo = (_value(v) for v in (transa, transb, compute, algo))
        a_type, b_type, c_type = (_value(v) for v in (a_type, b_type, c_type))
        if min(m, n, k, count) < 0 or transa not in (0, 1, 2) or transb not in (0, 1, 2) or algo not in _ALGORITHMS:
            return _INVALID_VALUE
        if a_type != b_type or (a_type, c_type) not in _SUPPORTED.get(compute, ()):
            return _NOT_SUPPORTED
        shape_a = (m, k) if transa == CUBLAS_OP_N else (k, m)
        shape_b = (k, n) if transb == CUBLAS_OP_N else (n, k)
        if lda < max(1, shape_a[0]) or ldb < max(1, shape_b[0]) or ldc < max(1, m):
            return _INVALID_VALUE
        in_dtype, out_dtype = _DTYPES[a_type], _DTYPES[c_type]
        calls.append({"name": name, "a": in_dtype.name, "b": in_dtype.name, "c": out_dtype.name, "compute": compute,
                      "m": m, "n": n, "k": k, "batch": count})
        if m == 0 or n == 0 or count == 0:
            return _SUCCESS
        work = numpy.float64 if compute == COMPUTE_64F else numpy.float32
        alpha = _scalar(alpha, found.pointer_mode, numpy.dtype(work))
        beta = _scalar(beta, found.pointer_mode, numpy.dtype(work))
        outputs, reads, operands, writes = [], [], [], {}
        for index in range(count):
            pointer = _value(C) + index * stride_c * out_dtype.itemsize
            _aligned(pointer, out_dtype, name)
            c, block_c = _matrix(pointer, m, n, ldc, out_dtype)
            outputs.append(c)
            writes[id(block_c)] = block_c
            if beta != 0:
                reads.append(block_c)
            pair = []
            for base, shape, leading, op, stride in ((A, shape_a, lda, transa, stride_a),
                                                     (B, shape_b, ldb, transb, stride_b)):
                if k == 0:
                    pair.append(None)
                    continue
                pointer = _value(base) + index * stride * in_dtype.itemsize
                _aligned(pointer, in_dtype, name)
                matrix, block = _matrix(pointer, shape[0], shape[1], leading, in_dtype)
                pair.append(matrix if op == CUBLAS_OP_N else matrix.T)
                reads.append(block)
            operands.append(pair)
        stream = stream_module._from_pointer(found.stream)
        if stream is None or stream.ptr in (0, 1):
            raise RuntimeError(f"Simulated cuBLAS: {name} on the legacy default stream (the handle's stream was "
                               "never set): minikeras points its handle at its own stream first (cublas_direct).")

        def compute_all():
            for c, (a, b) in zip(outputs, operands):
                if k == 0:
                    product = numpy.zeros((m, n), work)
                else:
                    a, b = a.astype(work), b.astype(work)
                    if compute == COMPUTE_32F_FAST_TF32:
                        a, b = to_tf32(a), to_tf32(b)
                    product = a @ b
                result = alpha * product + (beta * c.astype(work) if beta != 0 else 0)
                c[...] = result.astype(out_dtype)

        _calls.issue(stream, name, reads, list(writes.values()), compute_all)
        return _SUCCESS

    gemm_ex.__name__ = name
    return gemm_ex


_I, _I64, _P = ctypes.c_int, ctypes.c_longlong, ctypes.c_void_p
# The C prototypes (cublas_api.h, CUDA 13): name -> (restype, argtypes). Enums (cublasOperation_t,
# cudaDataType, cublasComputeType_t, cublasGemmAlgo_t) are C ints; strides ``long long``.
PROTOTYPES = {
    "cublasSgemm_v2": (_I, (_P, _I, _I, _I, _I, _I, ctypes.POINTER(ctypes.c_float), _P, _I, _P, _I,
                            ctypes.POINTER(ctypes.c_float), _P, _I)),
    "cublasDgemm_v2": (_I, (_P, _I, _I, _I, _I, _I, ctypes.POINTER(ctypes.c_double), _P, _I, _P, _I,
                            ctypes.POINTER(ctypes.c_double), _P, _I)),
    "cublasGemmEx": (_I, (_P, _I, _I, _I, _I, _I, _P, _P, _I, _I, _P, _I, _I, _P, _P, _I, _I, _I, _I)),
    "cublasGemmStridedBatchedEx": (_I, (_P, _I, _I, _I, _I, _I, _P, _P, _I, _I, _I64, _P, _I, _I, _I64, _P, _P, _I,
                                        _I, _I64, _I, _I, _I)),
}
library = _boundary.library("cuBLAS", {"cublasSgemm_v2": _gemm("float32", "cublasSgemm_v2"),
                                       "cublasDgemm_v2": _gemm("float64", "cublasDgemm_v2"),
                                       "cublasGemmEx": _gemm_ex("cublasGemmEx", False),
                                       "cublasGemmStridedBatchedEx": _gemm_ex("cublasGemmStridedBatchedEx", True)},
                            PROTOTYPES)
