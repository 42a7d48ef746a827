"""Whether a GPU really works here, and if not, what is missing.

Counting CUDA devices is not enough: a machine can have a driver and a GPU
but no NVRTC (CuPy compiles every elementwise kernel with it at run time) or
no cuBLAS (every matmul), and then each GPU op fails instead of the GPU being
reported as unavailable. So the probe does what the library will do: it
imports CuPy, counts devices, compiles and runs a tiny elementwise kernel and
runs a small matmul, checking both results on the host. The first step that
fails names what is missing.

The probe runs once per process (it costs a kernel compilation, about a
second on a cold cache) and its answer is cached; `probe(refresh=True)` runs
it again.
"""
import threading

#: What each failing step means, and what a user can do about it.
_INSTALL_HINT = ("install the wheels with `pip install 'minikeras[gpu]'` (CUDA 12) or "
                 "`pip install 'minikeras[gpu-cu13]'` (CUDA 13)")

_lock = threading.Lock()
_cached = {}


def _import_cupy():
    """Imports and returns ``cupy``; a separate function so tests can replace it."""
    import cupy

    return cupy


def _describe(error):
    """``"ErrorType: message"``, on one line."""
    text = " ".join(str(error).split())
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


def _check_import(import_cupy):
    try:
        return import_cupy(), None
    except ImportError as error:
        return None, f"CuPy is not installed ({_describe(error)}); {_INSTALL_HINT}"
    except Exception as error:  # a broken install raises anything at import time
        return None, f"CuPy is installed but failed to import ({_describe(error)})"


def _check_devices(cupy):
    try:
        count = cupy.cuda.runtime.getDeviceCount()
    except Exception as error:  # CUDARuntimeError: no driver, driver too old, ...
        return (f"no usable NVIDIA driver or CUDA device: counting devices failed "
                f"({_describe(error)}); check `nvidia-smi`")
    if count < 1:
        return "the NVIDIA driver sees no CUDA device (check CUDA_VISIBLE_DEVICES and `nvidia-smi`)"
    return None


def _check_elementwise(cupy):
    # CuPy compiles elementwise kernels with NVRTC the first time they run. A
    # kernel found in CuPy's on-disk cache needs no compiler, so NVRTC is
    # also loaded explicitly: otherwise a cached probe kernel would hide its
    # absence until the first uncached op.
    try:
        cupy.cuda.nvrtc.getVersion()
        with cupy.cuda.Device(0), cupy.cuda.Stream():  # its own stream, as all of the library's GPU work
            values = cupy.arange(4, dtype="float32")
            result = cupy.asnumpy(values * 2 + 1)
    except Exception as error:
        return (f"CUDA cannot compile or run a kernel: NVRTC (libnvrtc) is missing or does not "
                f"match the driver ({_describe(error)}); {_INSTALL_HINT}")
    if [float(value) for value in result] != [1.0, 3.0, 5.0, 7.0]:
        return f"a test elementwise kernel ran but returned {list(result)}, expected [1, 3, 5, 7]"
    return None


def _check_matmul(cupy):
    try:
        with cupy.cuda.Device(0), cupy.cuda.Stream():
            ones = cupy.ones((8, 8), dtype="float32")
            result = cupy.asnumpy(cupy.matmul(ones, ones))
    except Exception as error:
        return f"cuBLAS is missing or unusable: a matmul failed ({_describe(error)}); {_INSTALL_HINT}"
    if result.shape != (8, 8) or not (result == 8).all():
        return "a test 8x8 matmul on the GPU returned wrong values (expected all 8)"
    return None


def run_probe(import_cupy=None):
    """Runs every check, uncached.

    Args:
        import_cupy: Callable returning the CuPy module (tests pass a fake).

    Returns:
        ``(cupy_module, None)`` when the GPU works, else ``(None, reason)``
        where ``reason`` is one sentence naming what is missing.
    """
    cupy, reason = _check_import(import_cupy or _import_cupy)
    if reason is not None:
        return None, reason
    for check in (_check_devices, _check_elementwise, _check_matmul):
        reason = check(cupy)
        if reason is not None:
            return None, reason
    return cupy, None


def probe(refresh=False):
    """The cached result of `run_probe`: ``(cupy or None, reason or None)``."""
    with _lock:
        if refresh or "result" not in _cached:
            _cached["result"] = run_probe()
        return _cached["result"]


def _reset_for_tests():
    """Forget the cached answer."""
    with _lock:
        _cached.clear()
