"""Array modules behind one ``xp``: NumPy on the CPU, CuPy on NVIDIA GPUs.

CuPy is imported lazily, the first time a GPU is asked about, so that
``import minikeras`` stays fast and works on machines without CUDA.
"""
import os
import sys

import numpy

_cupy = None
_cupy_checked = False
SIMULATED_GPU_VARIABLE = "MINIKERAS_SIMULATED_GPU"


def cupy_module():
    """Return the ``cupy`` module, or None when CuPy or CUDA is unavailable.

    With ``MINIKERAS_SIMULATED_GPU=N`` set (the test suite's simulated GPU),
    the CuPy double ``minikeras.testing.sim_cupy`` instead: the library's
    real GPU code runs on its N simulated devices (read at each call, so a
    test may switch it on and off).
    """
    if os.environ.get(SIMULATED_GPU_VARIABLE, "").strip() not in ("", "0"):
        from minikeras.testing import sim_cupy

        return sim_cupy
    global _cupy, _cupy_checked
    if not _cupy_checked:
        _cupy_checked = True
        try:
            import cupy

            if cupy.cuda.runtime.getDeviceCount() > 0:
                _cupy = cupy
        except Exception:  # ImportError, CUDARuntimeError with no driver, ...
            _cupy = None
    return _cupy


def gpu_available():
    """True when CuPy imports, a CUDA device is visible, and a test
    elementwise kernel (NVRTC) and a test matmul (cuBLAS) run correctly on it.

    The check runs once per process; see `minikeras.backend.gpu_probe`.
    """
    from minikeras.backend import gpu_probe

    return gpu_probe.probe()[0] is not None


def gpu_unavailable_reason():
    """Why `gpu_available` is False, in one sentence (CuPy not installed, no
    driver or device, NVRTC missing, cuBLAS missing), or None when a GPU works."""
    from minikeras.backend import gpu_probe

    return gpu_probe.probe()[1]


def get_array_module(array):
    """Return ``numpy`` or ``cupy``, whichever owns ``array`` (like Chainer's)."""
    if isinstance(array, numpy.ndarray) or numpy.isscalar(array):
        return numpy
    cupy = cupy_module()
    if cupy is not None and isinstance(array, cupy.ndarray):
        return cupy
    return numpy


_NUMBERS = (int, float, complex, numpy.generic)


def is_array(value):
    """True for an array of any device: NumPy, or CuPy's (the module
    :func:`cupy_module` gives)."""
    if isinstance(value, numpy.ndarray):
        return True
    if isinstance(value, _NUMBERS):  # the common non-arrays: no read of the environment
        return False
    cupy = cupy_module() if os.environ.get(SIMULATED_GPU_VARIABLE) else _cupy  # never probes CUDA
    return cupy is not None and isinstance(value, cupy.ndarray)


def to_numpy(array):
    """A host (NumPy) copy of an array of any device, through the device
    that owns it; NumPy arrays pass through."""
    if isinstance(array, numpy.ndarray):
        return array
    from minikeras.device import registry

    return registry.to_host(array)


def _tune_host_allocator():
    """Keep freed large buffers in the process instead of returning them to
    the OS after every op.

    glibc serves blocks above 128 KiB with mmap and unmaps them on free, so
    every activation-sized temporary costs fresh page faults (measured in
    benchmarks/NOTES.md, "CPU tuning constants"). Raising the
    mmap and trim thresholds makes such blocks reusable, as the allocators
    of PyTorch and TensorFlow do. Set MINIKERAS_MALLOC_TUNING=0 to skip.
    """
    if os.environ.get("MINIKERAS_MALLOC_TUNING", "1") == "0" or not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes

        libc = ctypes.CDLL("libc.so.6")
        m_trim_threshold, m_mmap_threshold = -1, -3
        ok = libc.mallopt(m_mmap_threshold, 1 << 30) == 1
        ok = libc.mallopt(m_trim_threshold, 2**31 - 1) == 1 and ok
        return ok
    except (OSError, AttributeError):  # not glibc (musl, ...)
        return False


HOST_ALLOCATOR_TUNED = _tune_host_allocator()


from minikeras.backend.keras_helpers import (  # noqa: E402,F401  (keras.backend's helpers)
    backend, clear_session, epsilon, floatx, image_data_format, set_epsilon, set_floatx, set_image_data_format,
)
from minikeras.backend.keras_helpers import get_uid, is_keras_tensor  # noqa: E402,F401  (keras.backend names)
from minikeras.backend.dtypes import (  # noqa: E402,F401  (keras.backend's dtype names)
    is_float_dtype, is_int_dtype, result_type, standardize_dtype,
)
