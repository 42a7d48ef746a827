"""``cupy.cuda.nvrtc`` of the simulated CUDA: NVRTC is there (its version),
but the simulation compiles no CUDA source (``cupy.RawKernel`` is absent)."""


def getVersion():
    return (12, 9)
