"""The error of CuPy's cuBLAS wrapper, for the simulated CUDA's cuBLAS
handles (cuda/device.py) and GEMM (libs/cublas.py)."""


class CUBLASError(RuntimeError):
    """``cupy_backends.cuda.libs.cublas.CUBLASError(status)``: same module,
    name, message and ``status``, so the library classifies it as the real
    one (device/cuda_errors.py)."""

    _NAMES = {1: "CUBLAS_STATUS_NOT_INITIALIZED", 3: "CUBLAS_STATUS_ALLOC_FAILED", 7: "CUBLAS_STATUS_INVALID_VALUE",
              13: "CUBLAS_STATUS_EXECUTION_FAILED", 14: "CUBLAS_STATUS_INTERNAL_ERROR"}

    def __init__(self, status):
        self.status = status
        super().__init__(self._NAMES.get(status, f"CUBLAS_STATUS_{status}"))

    def __reduce__(self):
        return (type(self), (self.status,))


CUBLASError.__module__ = "cupy_backends.cuda.libs.cublas"
