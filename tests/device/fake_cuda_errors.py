"""Stand-ins for CuPy 14's CUDA error classes: the same module paths, class
names, bases, constructor arguments and attributes (``status``), so that
the library classifies them as it would the real ones without a GPU.
tests/autograd/test_device_errors.py checks them against the installed CuPy.
"""

_CUBLAS_STATUS = {3: "CUBLAS_STATUS_ALLOC_FAILED", 13: "CUBLAS_STATUS_EXECUTION_FAILED"}


class CUBLASError(RuntimeError):
    """Like CuPy 14's: ``CUBLASError(status)``, the message the status's name."""

    __module__ = "cupy_backends.cuda.libs.cublas"

    def __init__(self, status):
        self.status = status
        super().__init__(_CUBLAS_STATUS[status])


class CUDARuntimeError(RuntimeError):
    __module__ = "cupy_backends.cuda.api.runtime"

    def __init__(self, status):
        self.status = status
        super().__init__({700: "cudaErrorIllegalAddress: an illegal memory access was encountered",
                          2: "cudaErrorMemoryAllocation: out of memory"}[status])


class CompileException(Exception):
    __module__ = "cupy.cuda.compiler"

    def __init__(self, msg, source, name, options, backend="nvrtc"):
        self._msg, self.source, self.name, self.options, self.backend = msg, source, name, options, backend
        super().__init__()

    def __str__(self):
        return self._msg
