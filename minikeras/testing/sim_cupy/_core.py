"""``cupy._core``'s compute-type switch (cupy/_core/_routines_linalg.pyx,
v14.2.0): per dtype, what CuPy's own GEMMs may convert their inputs to.

``set_compute_type(dtype, COMPUTE_TYPE_TF32)`` makes CuPy's 2-D float32
products (``dot``, ``matmul`` of matrices, ``tensordot``: its
``tensordot_core_v11``) pass ``CUBLAS_COMPUTE_32F_FAST_TF32``; its batched
products pass a legacy compute type and ignore it. The simulated CuPy
models exactly that: such a product rounds its float32 inputs to TF32
(``libs/cublas.to_tf32``) while the float32 compute type is TF32 (_calls.py).
CuPy reads ``CUPY_TF32`` only when the compute type is still undecided; a
GPU is Ampere or newer here (compute capability 90), so TF32 is accepted.
"""
import os
import types

import numpy

_routines_linalg = types.SimpleNamespace(
    COMPUTE_TYPE_TBD=0, COMPUTE_TYPE_DEFAULT=1, COMPUTE_TYPE_PEDANTIC=2, COMPUTE_TYPE_FP16=3,
    COMPUTE_TYPE_FP32=4, COMPUTE_TYPE_FP64=5, COMPUTE_TYPE_BF16=6, COMPUTE_TYPE_TF32=7)
_types = {}  # dtype name -> compute type


def _index(dtype):
    dtype = numpy.dtype(dtype)
    if dtype.name not in ("bfloat16", "float16", "float32", "float64", "complex64", "complex128"):
        raise TypeError(f"dtype is not supported: {dtype}")
    return {"complex64": "float32", "complex128": "float64"}.get(dtype.name, dtype.name)


def set_compute_type(dtype, compute_type):
    """``cupy._core.set_compute_type(dtype, compute_type)``."""
    if compute_type not in range(8):
        raise ValueError(f"Unknown compute type: {compute_type}")
    _types[_index(dtype)] = compute_type


def get_compute_type(dtype):
    """``cupy._core.get_compute_type(dtype)``: decided on first use (TF32 for
    float32 when ``CUPY_TF32`` > 0, else the default)."""
    index = _index(dtype)
    if _types.get(index, 0) == _routines_linalg.COMPUTE_TYPE_TBD:
        tf32 = index == "float32" and int(os.getenv("CUPY_TF32", "0")) > 0
        _types[index] = _routines_linalg.COMPUTE_TYPE_TF32 if tf32 else _routines_linalg.COMPUTE_TYPE_DEFAULT
    return _types[index]
