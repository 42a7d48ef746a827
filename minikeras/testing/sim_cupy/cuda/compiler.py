"""``cupy.cuda.compiler`` of the simulated CUDA: the error NVRTC raises
(the simulated refusals of _limits.py raise it where CuPy's kernels would
not compile)."""


class CompileException(Exception):
    """``cupy.cuda.compiler.CompileException(msg, source, name, options, backend='nvrtc')``."""

    def __init__(self, msg, source, name, options, backend="nvrtc"):
        self._msg, self.source, self.name, self.options, self.backend = msg, source, name, options, backend
        super().__init__()

    def __str__(self):
        return self._msg


CompileException.__module__ = "cupy.cuda.compiler"  # how device/cuda_errors.py recognises CuPy's errors
