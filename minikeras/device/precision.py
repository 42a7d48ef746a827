"""TensorFloat-32, as TensorFlow: on by default for float32 matrix products
and convolutions on Ampere and newer GPUs (compute capability 8.0 or more).

TF32 keeps float32's range and 10 of its 23 mantissa bits for the
products' inputs and accumulates in float32: the tensor cores then run
float32 GEMMs and convolutions about 8 times faster, at about 1e-3 relative
error per product instead of 1e-7. ``enable_tensor_float_32_execution(False)``
gives exact float32 arithmetic (``mk.config.experimental``, TensorFlow's
names). Where the switch acts:

- cuBLAS products minikeras calls directly (``device/cublas_direct.py``:
  batched and 16-bit products, and every product of a CUDA graph capture):
  the compute type ``CUBLAS_COMPUTE_32F_FAST_TF32`` or ``CUBLAS_COMPUTE_32F``;
- CuPy's own products: CuPy's per-dtype compute type
  (``cupy._core.set_compute_type(float32, COMPUTE_TYPE_TF32 or
  COMPUTE_TYPE_DEFAULT)``, cupy/_core/_routines_linalg.pyx, v14.2.0; what
  the ``CUPY_TF32=1`` environment variable sets at the first product);
- cuDNN's convolutions (``device/cudnn.py``): engines noted
  ``CUDNN_NUMERICAL_NOTE_TENSOR_CORE`` are allowed for float32 or not, as
  PyTorch filters them from ``allow_tf32``.

float16/bfloat16 products always use the tensor cores, float64 never; the
CPU computes exactly whatever the switch says. ``NVIDIA_TF32_OVERRIDE=0`` in
the environment forbids TF32 whatever the switch says, as NVIDIA's
libraries (and so TensorFlow and PyTorch) honour it: a process tree's
setting, which the test suite uses for the worker processes it launches.
"""
import functools
import os

import numpy

__all__ = ["enable_tensor_float_32_execution", "tensor_float_32_execution_enabled"]

_state = {"tf32": True}  # TensorFlow's default
_AMPERE = 80


def enable_tensor_float_32_execution(enabled):
    """Allow (True, the default) or forbid TensorFloat-32 in float32 matrix
    products and convolutions on GPUs of compute capability 8.0 and newer.

    Args:
        enabled: a bool.

    Raises:
        TypeError: ``enabled`` is not a bool.
    """
    if not isinstance(enabled, (bool, numpy.bool_)):
        raise TypeError(f"enable_tensor_float_32_execution expects a bool, received {enabled!r} "
                        f"({type(enabled).__name__}).")
    _state["tf32"] = bool(enabled)


def tensor_float_32_execution_enabled():
    """True when TensorFloat-32 is allowed (the default), False otherwise."""
    return _state["tf32"]


@functools.lru_cache(maxsize=None)
def compute_capability(cupy, cuda_id):
    """The compute capability of CUDA device ``cuda_id`` as an int (90 for an H100/H200)."""
    return int(cupy.cuda.Device(cuda_id).compute_capability)


def tf32_on(cupy, cuda_id):
    """Whether float32 products and convolutions on that device may use TF32
    now: the switch is on and the GPU is Ampere or newer."""
    if os.environ.get("NVIDIA_TF32_OVERRIDE") == "0":
        return False
    return _state["tf32"] and compute_capability(cupy, cuda_id) >= _AMPERE


_applied = {}  # id(cupy) -> the float32 compute type last given to CuPy


def sync_cupy(cupy, cuda_id):
    """Give CuPy's own float32 products the compute type the switch asks for
    (a global of CuPy's, set only when it changes)."""
    core = getattr(cupy, "_core", None)
    if core is None or not hasattr(core, "set_compute_type"):
        return
    linalg = core._routines_linalg  # bound on cupy._core by its own import of it
    wanted = linalg.COMPUTE_TYPE_TF32 if tf32_on(cupy, cuda_id) else linalg.COMPUTE_TYPE_DEFAULT
    if _applied.get(id(cupy)) != wanted:
        core.set_compute_type(numpy.float32, wanted)
        _applied[id(cupy)] = wanted
