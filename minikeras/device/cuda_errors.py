"""CuPy's CUDA errors as the library's own, naming the device, the op and what to try.

CuPy raises one class per CUDA library (``CUBLASError`` with a ``status``
code, ``CUDARuntimeError``, ``CUDADriverError``, ``NVRTCError``, and
``CompileException`` when a kernel's source does not compile). A user
seeing ``CUBLAS_STATUS_EXECUTION_FAILED`` from deep inside CuPy learns
neither which of their ops failed nor what to do; :func:`translate` turns
each into :class:`~minikeras.errors.DeviceError` (or, for the codes that
mean out of memory, :class:`~minikeras.errors.ResourceExhaustedError`).

The classes are recognised by module and name along the exception's MRO,
never by importing CuPy (this runs on machines without CUDA, and must not
load cuBLAS to classify an error). tests/device/test_cuda_errors.py checks
the names against the installed CuPy.
"""
import sys

from minikeras.errors import DeviceError, ResourceExhaustedError

# (module, class name) -> the CUDA component, as CuPy 14 defines them.
CUPY_ERRORS = {
    ("cupy_backends.cuda.libs.cublas", "CUBLASError"): "cuBLAS",
    ("cupy_backends.cuda.api.runtime", "CUDARuntimeError"): "CUDA runtime",
    ("cupy_backends.cuda.api.driver", "CUDADriverError"): "CUDA driver",
    ("cupy_backends.cuda.libs.nvrtc", "NVRTCError"): "NVRTC",
    ("cupy.cuda.compiler", "CompileException"): "NVRTC",
    ("cupy_backends.cuda.libs.curand", "CURANDError"): "cuRAND",
    ("cupy_backends.cuda.libs.cusolver", "CUSOLVERError"): "cuSOLVER",
    # cuDNN is called through ctypes (device/cudnn.py), with an error of ours.
    ("minikeras.device.cudnn", "CudnnError"): "cuDNN",
}
# Status codes that mean the device ran out of memory.
_OUT_OF_MEMORY = {("cuBLAS", 3), ("CUDA runtime", 2), ("CUDA driver", 2), ("NVRTC", 1), ("cuRAND", 102),
                  ("cuSOLVER", 2),
                  # cuDNN 9's CUDNN_STATUS_INTERNAL_ERROR_{HOST,DEVICE}_ALLOCATION_FAILED (cudnn_graph.h;
                  # its old CUDNN_STATUS_ALLOC_FAILED, 2, names the host one now).
                  ("cuDNN", 4003), ("cuDNN", 4004)}
# A fault that leaves the CUDA context unusable: the errors driver_types.h and cuda.h (CUDA 13) document
# as leaving "the process in an inconsistent state" (contained error 226, illegal address 700, launch
# timeout 702, hardware stack error, illegal instruction, misaligned address, invalid address space,
# invalid PC, launch failure 714-719, external device 911). Not 701 (launch out of resources) nor 720
# (cooperative launch too large): those launches never started (benchmarks/ctypes_audit.py checks this).
_STICKY_CODES = (226, 700, 702, 714, 715, 716, 717, 718, 719, 911)
_STICKY = {(component, code) for component in ("CUDA runtime", "CUDA driver") for code in _STICKY_CODES}

_DEBUG = "rerun with CUDA_LAUNCH_BLOCKING=1 to see which op really failed (CUDA reports errors late)"
_ADVICE = {
    ("cuBLAS", 1): "cuBLAS could not start: the GPU may be held by another process or the driver is broken "
                   "(check nvidia-smi), or CuPy's CUDA libraries do not match the driver",
    ("cuBLAS", 8): "this GPU does not support the op's dtype or algorithm: try float32",
    ("cuBLAS", 15): "this GPU does not support the op's dtype or algorithm: try float32",
    ("cuBLAS", 7): "a value cuBLAS refuses reached it (please report it with the op's shapes and dtypes); "
                   "meanwhile try float32 and contiguous inputs",
    ("CUDA runtime", 35): "the NVIDIA driver is older than the CUDA runtime CuPy was built for: update the driver "
                          "or install the CuPy wheel for your CUDA (cupy-cuda12x / cupy-cuda13x)",
    ("CUDA runtime", 100): "no CUDA device is visible: check CUDA_VISIBLE_DEVICES and nvidia-smi",
    ("CUDA runtime", 701): "a GPU kernel asked for more registers or threads per block than this GPU has (the "
                           "launch did not start; the context is still usable): please report it with the op's "
                           "shapes and dtypes",
    ("CUDA runtime", 209): "the installed CuPy has no kernels for this GPU's architecture: install a CuPy wheel "
                           "that supports it",
    ("NVRTC", None): "compiling a GPU kernel failed: make sure the CUDA toolkit wheels (nvidia-cuda-nvrtc-cu12 "
                     "for cupy-cuda12x) are installed at the version CuPy expects",
}


def component(error):
    """The CUDA component a CuPy error comes from (``"cuBLAS"``...), or None for any other error."""
    for cls in type(error).__mro__:
        found = CUPY_ERRORS.get((cls.__module__, cls.__name__))
        if found is not None:
            return found
    return None


def _advice(kind, status):
    if (kind, status) in _STICKY:
        return ("the GPU context is now unusable (a kernel accessed memory it should not): restart the process; "
                + _DEBUG)
    advice = _ADVICE.get((kind, status)) or _ADVICE.get((kind, None))
    if advice:
        return advice
    return (f"{_DEBUG}; if every call fails, check that the NVIDIA driver supports the CUDA version of the "
            "installed CuPy wheel (nvidia-smi shows the driver's)")


def translate(error, device, op_name=None):
    """The library error for a CuPy CUDA ``error`` raised on ``device`` while
    running ``op_name`` (None: outside an op), or None when ``error`` is not one."""
    kind = component(error)
    if kind is None:
        return None
    status = getattr(error, "status", None)
    where = f"{op_name} on {device.canonical}" if op_name else f"work on {device.canonical}"
    detail = str(error) or type(error).__name__
    if (kind, status) in _OUT_OF_MEMORY:
        memory = getattr(device, "memory", None)
        return ResourceExhaustedError(
            device.canonical, 0, getattr(memory, "current", 0) or 0, getattr(memory, "limit", None),
            f"{kind} could not allocate its workspace in {where} ({detail}). Try a smaller batch, or free "
            "memory (delete tensors you no longer need).")
    return DeviceError(device.canonical, op_name, kind, status,
                       f"{where} failed: {kind} error {detail}. What to try: {_advice(kind, status)}.")


def reraise(device, op_name=None, translator=None):
    """Called in an ``except`` block (without ``as``): raise the library's error
    for the exception being handled (``translator``, default :func:`translate`),
    or re-raise it unchanged.

    No frame on the traceback keeps a reference to the exception: a reference
    cycle through the failing op's frames would keep its arrays alive until the
    garbage collector runs, and an out-of-memory error must free them at once.
    """
    error = sys.exc_info()[1]
    replacement = (translator or translate)(error, device, op_name)
    if replacement is None:
        del error
        raise  # noqa: PLE0704  (re-raises the exception being handled)
    if type(error) is type(replacement):  # the same error, now naming its op: shown once
        replacement.__suppress_context__ = True
    else:
        replacement.__cause__ = error
    del error
    try:
        raise replacement
    finally:
        replacement = None
