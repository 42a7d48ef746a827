"""cuBLAS's GEMMs called directly: the products CuPy cannot give.

Three kinds of products go through here, on CuPy's own cuBLAS handle of the
current thread and device:

- every product of a CUDA graph capture. CuPy 14.2 refuses every cuBLAS
  call while a stream captures: its wrappers set the handle's stream before
  each call, and ``cublas.setStream`` raises ``NotImplementedError('calling
  cuBLAS API during stream capture is currently unsupported')``
  (cupy_backends/cuda/libs/cublas.pyx, with a TODO noting that cuBLAS itself
  supports capture since CUDA 11.5; seen on an H200). :func:`prepare` points
  the handle at the capture's stream, host pointer mode, before the capture
  begins; during it nothing touches the handle's state.
- 16-bit products (float16, bfloat16), eager too: ``cublasGemmEx`` /
  ``cublasGemmStridedBatchedEx`` with 16-bit inputs and output and float32
  accumulation (``CUBLAS_COMPUTE_32F``), the tensor cores' arithmetic. CuPy
  14.2's batched bfloat16 matmul fails (cupy/cupy#10317), and its einsum
  contracts bfloat16 through it.
- batched products (more than 2 axes) of every float dtype, eager too, so
  that TF32 (``device/precision.py``) applies to them: CuPy's batched GEMM
  passes a legacy compute type and ignores its own TF32 setting.

Outside a capture each call first points the handle at the current stream
(what CuPy's wrappers do before theirs). Scalars ``alpha``/``beta`` are host
values, 1 and 0, baked into a captured graph.

A row-major ``a (m, k) @ b (k, n)`` is the column-major ``C^T = B^T A^T``.
An operand whose last axis has unit stride is passed as is (op N, leading
dimension its row stride); one whose second-to-last axis has (a transposed
view, as ``kernel.T`` in a backward pass) as op T; anything else is made
contiguous first. Batch axes are folded into one stride, 0 for an operand
broadcast over the whole batch; a partly broadcast operand is copied out.
The output is C-contiguous.

Compute types: float32 products use ``CUBLAS_COMPUTE_32F_FAST_TF32`` when
TF32 is on and the GPU is Ampere or newer, else exact float32 (a 2-D exact
product keeps ``cublasSgemm_v2``, the path checked on an H100 and an
H200); float64 ``CUBLAS_COMPUTE_64F`` (``cublasDgemm_v2`` in 2-D).

The library and CuPy's cuBLAS wrapper come from ``device/native.py``: the
process's, or the double a simulated CuPy provides for itself.
"""
import ctypes
import functools

import numpy

from minikeras.device import native, precision
from minikeras.device.graph import GraphCaptureError

_OP_N, _OP_T = 0, 1  # cublasOperation_t CUBLAS_OP_N, CUBLAS_OP_T
_FUNCTIONS = {"float32": ("cublasSgemm_v2", ctypes.c_float), "float64": ("cublasDgemm_v2", ctypes.c_double)}
_INT, _LONG_LONG, _POINTER = ctypes.c_int, ctypes.c_longlong, ctypes.c_void_p
# The C prototypes of every cuBLAS function called here (cublas_api.h, CUDA 13; benchmarks/ctypes_audit.py
# checks them against the header): name -> (restype, argtypes). Enums (cublasStatus_t, cublasOperation_t,
# cudaDataType, cublasComputeType_t, cublasGemmAlgo_t) are C ints; batch strides ``long long``. Only the
# restypes are declared (device/native.py says why); the calls pass ctypes objects where a C int would not do.
SIGNATURES = {
    "cublasSgemm_v2": (_INT, (_POINTER, _INT, _INT, _INT, _INT, _INT, ctypes.POINTER(ctypes.c_float), _POINTER, _INT,
                              _POINTER, _INT, ctypes.POINTER(ctypes.c_float), _POINTER, _INT)),
    "cublasDgemm_v2": (_INT, (_POINTER, _INT, _INT, _INT, _INT, _INT, ctypes.POINTER(ctypes.c_double), _POINTER, _INT,
                              _POINTER, _INT, ctypes.POINTER(ctypes.c_double), _POINTER, _INT)),
    "cublasGemmEx": (_INT, (_POINTER, _INT, _INT, _INT, _INT, _INT, _POINTER, _POINTER, _INT, _INT, _POINTER, _INT,
                            _INT, _POINTER, _POINTER, _INT, _INT, _INT, _INT)),
    "cublasGemmStridedBatchedEx": (_INT, (_POINTER, _INT, _INT, _INT, _INT, _INT, _POINTER, _POINTER, _INT, _INT,
                                          _LONG_LONG, _POINTER, _INT, _INT, _LONG_LONG, _POINTER, _POINTER, _INT,
                                          _INT, _LONG_LONG, _INT, _INT, _INT)),
}
# cudaDataType_t of each dtype (library_types.h).
CUDA_TYPES = {"float32": 0, "float64": 1, "float16": 2, "bfloat16": 14}
# cublasComputeType_t (cublas_api.h).
COMPUTE_32F, COMPUTE_32F_FAST_TF32, COMPUTE_64F = 68, 77, 70
GEMM_DEFAULT = -1  # cublasGemmAlgo_t CUBLAS_GEMM_DEFAULT: cuBLAS's heuristic (tensor cores where they apply)


class CublasError(RuntimeError):
    """A direct cuBLAS call failed (its status, the call, the shapes);
    ``cuda_errors.py`` names the op that made it."""

    def __init__(self, message, status):
        super().__init__(message)
        self.status = status


def _library(cupy):
    """The libcublas of ``cupy``: a double it provides, or the process's."""
    return native.declare(native.provided(cupy, "cublas") or _process_library(), SIGNATURES)


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
    return native.declare(ctypes.CDLL(paths[0]), SIGNATURES)


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


def _handle(xp, capturing):
    """CuPy's handle of this thread and device; outside a capture pointed at
    the current stream first (during one, :func:`prepare` did it)."""
    handle = xp.cuda.device.get_cublas_handle()
    if not capturing:
        cublas = _wrapper(xp)
        cublas.setStream(handle, xp.cuda.get_current_stream().ptr)
        cublas.setPointerMode(handle, cublas.CUBLAS_POINTER_MODE_HOST)
    return handle


def takes(a, b):
    """Whether the direct path multiplies ``a`` and ``b``: one float dtype
    it has a compute type for, at least one axis each."""
    return a.dtype == b.dtype and a.dtype.name in CUDA_TYPES and a.ndim >= 1 and b.ndim >= 1


def _refuse(a, b):
    raise GraphCaptureError(f"a matrix product of {a.dtype} {a.shape} and {b.dtype} {b.shape} cannot be "
                            "captured: CuPy refuses cuBLAS during a capture, and the direct path takes products of "
                            "one float dtype (float16, bfloat16, float32, float64) only.")


def _matrix_layout(array):
    """``(op, leading dimension)`` of the last two axes of ``array`` seen as
    a row-major matrix, or None when they are not one (module docstring)."""
    rows, columns = array.shape[-2:]
    item = array.itemsize
    if any(stride % item or stride < 0 for stride in array.strides[-2:]):
        return None
    row_stride, column_stride = (stride // item for stride in array.strides[-2:])
    if (column_stride == 1 or columns == 1) and (rows == 1 or row_stride >= columns):
        return _OP_N, max(1, columns if rows == 1 else row_stride)
    if (row_stride == 1 or rows == 1) and (columns == 1 or column_stride >= rows):
        return _OP_T, max(1, rows if columns == 1 else column_stride)
    return None


def _batch_stride(array, batch):
    """The one element stride between the matrices of ``array`` over the
    batch shape ``batch`` (0: the same matrix for all), or None."""
    own = array.shape[:-2]
    if all(size == 1 for size in own):
        return 0
    if tuple(own) != tuple(batch):
        return None
    sizes_and_strides = [(size, stride) for size, stride in zip(own, array.strides[:-2]) if size != 1]
    for (_, outer), (size, inner) in zip(sizes_and_strides, sizes_and_strides[1:]):
        if outer != inner * size:
            return None
    stride = sizes_and_strides[-1][1]
    if stride % array.itemsize or stride < 0:
        return None
    return stride // array.itemsize


def _operand(xp, array, batch):
    """``(op, leading dimension, batch stride, array)`` of one operand,
    copied to a C-contiguous array of the full batch when its strides are
    not cuBLAS's."""
    layout, stride = _matrix_layout(array), _batch_stride(array, batch)
    if layout is None or stride is None:
        if _batch_stride(array, batch) is None:  # partly broadcast: give it the whole batch
            array = xp.broadcast_to(array, tuple(batch) + array.shape[-2:])
        array = xp.ascontiguousarray(array)
        layout, stride = _matrix_layout(array), _batch_stride(array, batch)
    return layout[0], layout[1], stride, array


def compute_type(xp, dtype, cuda_id=None):
    """The cublasComputeType_t of a product in ``dtype`` now (TF32 or not)."""
    if dtype.name == "float64":
        return COMPUTE_64F
    if dtype.name == "float32":
        device = xp.cuda.device.get_device_id() if cuda_id is None else cuda_id
        return COMPUTE_32F_FAST_TF32 if precision.tf32_on(xp, device) else COMPUTE_32F
    return COMPUTE_32F


def matmul(xp, a, b, capturing=False):
    """``a @ b`` (NumPy's matmul: batched, broadcast, 1-D operands as vectors)
    for arrays of one float dtype, through ``cublasGemmEx`` or
    ``cublasGemmStridedBatchedEx`` on the current stream (see the module
    docstring). ``capturing``: a capture is under way (the handle's stream
    was set before it)."""
    if not takes(a, b):
        _refuse(a, b)
    vector_a, vector_b = a.ndim == 1, b.ndim == 1
    a = a[None, :] if vector_a else a
    b = b[:, None] if vector_b else b
    batch = numpy.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    m, k = a.shape[-2:]
    n = b.shape[-1]
    if k != b.shape[-2]:
        raise ValueError(f"matmul: shapes {a.shape} and {b.shape} are not aligned.")
    if b.ndim == 2 and a.ndim > 2 and a.flags.c_contiguous:  # (..., m, k) @ (k, n): one 2-D product
        out = _product(xp, a.reshape(-1, k), b, (), capturing).reshape(batch + (m, n))
    else:
        out = _product(xp, a, b, batch, capturing)
    if vector_a:
        out = out[..., 0, :]
    if vector_b:
        out = out[..., 0]
    return out


def _product(xp, a, b, batch, capturing, out=None):
    """The batched product of ``batch`` matrices into a new C-contiguous array."""
    m, k = a.shape[-2:]
    n = b.shape[-1]
    count = int(numpy.prod(batch, dtype=numpy.int64))
    target = xp.empty(tuple(batch) + (m, n), a.dtype) if out is None else out
    if not (m and n and count):
        return target
    if not k:
        target.fill(0)
        return target
    op_a, ld_a, stride_a, a = _operand(xp, a, batch)
    op_b, ld_b, stride_b, b = _operand(xp, b, batch)
    dtype = a.dtype
    kind = compute_type(xp, dtype)
    library, handle = _library(xp), _handle(xp, capturing)
    if not batch and (dtype.name, kind) in (("float32", COMPUTE_32F), ("float64", COMPUTE_64F)):
        name, scalar = _FUNCTIONS[dtype.name]  # exact 2-D float32/float64: the legacy GEMM, as before
        alpha, beta = scalar(1.0), scalar(0.0)
        status = getattr(library, name)(
            ctypes.c_void_p(handle), op_b, op_a, n, m, k, ctypes.byref(alpha), ctypes.c_void_p(b.data.ptr), ld_b,
            ctypes.c_void_p(a.data.ptr), ld_a, ctypes.byref(beta), ctypes.c_void_p(target.data.ptr), n)
        _check(status, name, a, b)
        return target
    scalar = ctypes.c_double if kind == COMPUTE_64F else ctypes.c_float
    alpha, beta = scalar(1.0), scalar(0.0)
    cuda_type = CUDA_TYPES[dtype.name]
    common = (ctypes.c_void_p(handle), op_b, op_a, n, m, k, ctypes.byref(alpha))
    if batch and count > 1:
        name = "cublasGemmStridedBatchedEx"
        status = library.cublasGemmStridedBatchedEx(
            *common, ctypes.c_void_p(b.data.ptr), cuda_type, ld_b, ctypes.c_longlong(stride_b),
            ctypes.c_void_p(a.data.ptr), cuda_type, ld_a, ctypes.c_longlong(stride_a), ctypes.byref(beta),
            ctypes.c_void_p(target.data.ptr), cuda_type, n, ctypes.c_longlong(m * n), count, kind, GEMM_DEFAULT)
    else:
        name = "cublasGemmEx"
        status = library.cublasGemmEx(
            *common, ctypes.c_void_p(b.data.ptr), cuda_type, ld_b, ctypes.c_void_p(a.data.ptr), cuda_type, ld_a,
            ctypes.byref(beta), ctypes.c_void_p(target.data.ptr), cuda_type, n, kind, GEMM_DEFAULT)
    _check(status, name, a, b)
    return target


def _check(status, name, a, b):
    if status != 0:
        raise CublasError(f"{name} failed (cuBLAS status {status}) for {a.dtype} operands of shapes {a.shape} and "
                          f"{b.shape}.", status)


def gemm(xp, a, b, out=None):
    """``a @ b`` for 2-D arrays of one float dtype, into ``out`` (C-contiguous,
    or a new array), on the current stream of CuPy's handle, during a capture
    (the handle's stream was set by :func:`prepare`)."""
    if a.ndim != 2 or b.ndim != 2 or not takes(a, b):
        _refuse(a, b)
    target = out if out is not None and out.flags.c_contiguous and out.dtype == a.dtype else None
    target = _product(xp, a, b, (), True, target)
    if out is not None and target is not out:
        out[...] = target
        return out
    return target
