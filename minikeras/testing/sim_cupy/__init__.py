"""A simulated ``cupy`` (CuPy 14.2) on NumPy: the CuPy double of the test suite.

With ``MINIKERAS_SIMULATED_GPU=N`` set, ``minikeras.backend.cupy_module()``
hands this module to the device registry in place of ``cupy``, and the
library's real :class:`~minikeras.device.gpu.GpuDevice` runs on it: its
streams, events, pool, allocator, graph captures and direct cuBLAS/cuDNN
calls are the code under test, on N simulated devices. What it models:

- ``ndarray`` (_array.py): NumPy underneath, CuPy's strictness on top (no
  implicit host conversion, CuPy's attributes only, host reads counted),
  CuPy 14.2's refusals (_limits.py) and its wrapping of out-of-range
  indices (_indexing.py); every call is issued to the current stream
  (_calls.py) and counted as the kernel launch it would be (_counting.py);
- ``cuda``: ``Device``, ``Stream``, ``Event`` with the race detector's
  vector clocks (_races.py), ``MemoryPool`` with CuPy's 512-byte rounding
  and per-stream arenas and the driver's memory behind it, ``using_allocator``,
  pinned host memory, whose asynchronous copies the host may not overwrite
  before it synchronises (cuda/pinned_memory.py), CUDA's runtime errors, stream capture and ``Graph`` replay with CUDA's and
  CuPy's refusals (cuda/graph.py), ``nccl`` (minikeras.testing.sim_nccl);
- the CUDA libraries minikeras calls through ctypes, at that boundary:
  cuBLAS's GEMM (libs/cublas.py, for device/cublas_direct.py) and cuDNN's
  convolutions (libs/cudnn.py, for device/cudnn.py), provided to the library
  through ``minikeras.device.native`` for this module only;
- ``random`` (a cuRAND-like Generator), ``linalg``, ``fft``, and the NumPy
  names CuPy 14.2 also has (_names.py); nothing else (no ``RawKernel``: the
  simulation compiles no CUDA, so ``minikeras.kernels`` runs each fused
  kernel's NumPy reference, counted as one launch).

Every public name here and in ``cuda`` is CuPy's, with CuPy's signature
(tests/backend/test_cupy_api.py checks them against the installed CuPy);
the simulation's own controls are in ``simulation.py``. ``import
minikeras`` never loads this package.
"""
import types as _types

import numpy as _numpy

from minikeras.testing.sim_cupy import _array, _calls, _core, _indexing, _limits, _names  # noqa: F401
from minikeras.testing.sim_cupy._array import ndarray
from minikeras.testing.sim_cupy import cuda, random  # noqa: E402,F401  (cupy.cuda, cupy.random)

__version__ = "14.2.0"

_CREATION = frozenset("asarray array asanyarray ascontiguousarray asfortranarray".split())


class _Ufunc:
    """A NumPy ufunc on simulated arrays (``at``, ``reduce``, ... included)."""

    def __init__(self, ufunc):
        self._ufunc = ufunc
        self.__name__ = ufunc.__name__

    def __repr__(self):
        return f"<ufunc '{self.__name__}'>"

    def __call__(self, *args, **kwargs):
        _limits.check_function(self.__name__, args, kwargs)  # matmul is a ufunc in NumPy 2
        return _calls.call(self._ufunc, self.__name__, args, kwargs)

    def __getattr__(self, name):
        method = getattr(self._ufunc, name)
        if not callable(method):
            return method
        ufunc_name = self.__name__

        def call(*args, **kwargs):
            # CuPy's ufunc.at/reduce/accumulate refuse more than NumPy's (_limits.py).
            _limits.check_ufunc_method(ufunc_name, name, args, kwargs)
            run = method
            if name == "at":
                run = _atomic_order_at(method) if ufunc_name == "add" else _wrapping_at(method)
            result = _calls.call(run, f"{ufunc_name}.{name}", args, kwargs)
            if name == "at" and ufunc_name in ("maximum", "minimum"):
                _round_like_cupys_double_atomics(args, kwargs)
            return result

        return call


def _wrapping_at(method):
    """``ufunc.at`` as CuPy's ``_scatter_op``: integer-array indices wrap."""
    def at(a, indices, *rest):
        return method(a, _indexing.wrap_index(a.shape, indices), *rest)

    return at


_ATOMIC_ORDER = _numpy.random.default_rng(0x5CA77E2)  # the order atomics land in, per call


def _atomic_order_at(method):
    """``add.at`` as CuPy's ``_scatter_op``: indices wrap, and each element
    is one ``atomicAdd``, so a floating sum's additions land in an order
    that changes from call to call (its last bits with it). The simulation
    adds the (position, value) pairs in a permuted order drawn per call;
    integer sums are exact in any order."""
    def at(a, indices, values=None):
        indices = _indexing.wrap_index(a.shape, indices)
        if a.dtype.kind not in "fcV" or values is None:
            return method(a, indices, values)
        positions = _numpy.arange(a.size).reshape(a.shape)[indices]
        values = _numpy.broadcast_to(_numpy.asarray(values), positions.shape).reshape(-1)
        positions = positions.reshape(-1)
        order = _ATOMIC_ORDER.permutation(positions.size)
        return method(a, _numpy.unravel_index(positions[order], a.shape), values[order])

    return at


def _round_like_cupys_double_atomics(args, kwargs):
    """CuPy 14.2's double atomicMax/atomicMin compare with fmaxf/fminf
    (cupy/_core/include/cupy/atomics.cuh): every float64 element that
    ``maximum.at``/``minimum.at`` touches is stored rounded to float32."""
    target = args[0] if args else kwargs.get("a")
    indices = args[1] if len(args) > 1 else kwargs.get("indices")
    if type(target) is not ndarray or target.dtype != _numpy.float64 or not _limits._has_integer_array(indices):
        return
    host = target._array
    if type(indices) is ndarray:
        indices = indices._array
    elif isinstance(indices, tuple):
        indices = tuple(item._array if type(item) is ndarray else item for item in indices)
    touched = _numpy.zeros(host.shape, dtype=bool)
    touched[_indexing.wrap_index(host.shape, indices)] = True
    host[touched] = host[touched].astype(_numpy.float32)


def _function(function, name):
    def call(*args, **kwargs):
        _limits.check_function(name, args, kwargs)  # what CuPy refuses and NumPy computes
        return _calls.call(function, name, args, kwargs)

    call.__name__ = name
    return call


def _creation(function, name):
    """``asarray`` and its kin: a device array passes through where CuPy
    makes no copy; a host value is uploaded (copied: CuPy never shares host
    memory)."""
    def call(*args, **kwargs):
        kwargs.pop("blocking", None)  # CuPy's own keyword
        if args and type(args[0]) is ndarray:
            source = args[0]
            if source._mem.device_id != cuda.runtime.getDevice():  # CuPy copies it to the current device
                copied = _calls.copy_across(source, "F" if name == "asfortranarray" else "C")
                dtype = kwargs.get("dtype", args[1] if len(args) > 1 else None)
                return copied if dtype is None or _numpy.dtype(dtype) == copied.dtype else copied.astype(dtype)
            copy = name == "array" and kwargs.get("copy", True)
            dtype = kwargs.get("dtype", args[1] if len(args) > 1 else None)
            flags = source._array.flags
            order_ok = {"ascontiguousarray": flags.c_contiguous, "asfortranarray": flags.f_contiguous}.get(name, True)
            if not copy and order_ok and (dtype is None or _numpy.dtype(dtype) == source.dtype):
                _calls.stream_for((source,), name)
                return source
        return _calls.call(function, name, args, kwargs, allow_host=True)

    call.__name__ = name
    return call


def _wrapped(module, name):
    value = getattr(module, name)
    if isinstance(value, _numpy.ufunc):
        return _Ufunc(value)
    if isinstance(value, type) or not callable(value):
        return value  # dtypes, constants (pi, newaxis), exception types
    if module is _numpy and name in _CREATION:
        return _creation(value, name)
    if module is _numpy and name in _indexing.FUNCTIONS:  # where CuPy's result differs: ids wrap
        return _function(_indexing.FUNCTIONS[name], name)
    return _function(value, name)


def __getattr__(name):
    if name not in _names.TOP:
        raise AttributeError(f"module 'cupy' has no attribute {name!r} (simulated CuPy 14.2)")
    value = globals()[name] = _wrapped(_numpy, name)
    return value


class _Namespace(_types.ModuleType):
    """``cupy.linalg``, ``cupy.fft``, ``cupy.lib.stride_tricks``: NumPy's
    functions of the names CuPy has, on simulated arrays."""

    def __init__(self, module, name, names):
        super().__init__(name)
        self._module, self._names = module, names

    def __getattr__(self, name):
        if name.startswith("_") or name not in self._names:
            raise AttributeError(f"module {self.__name__!r} has no attribute {name!r} (simulated CuPy 14.2)")
        value = _wrapped(self._module, name)
        setattr(self, name, value)
        return value


linalg = _Namespace(_numpy.linalg, "cupy.linalg", _names.LINALG)
fft = _Namespace(_numpy.fft, "cupy.fft", _names.FFT)
lib = _types.ModuleType("cupy.lib")
lib.stride_tricks = _Namespace(_numpy.lib.stride_tricks, "cupy.lib.stride_tricks", _names.STRIDE_TRICKS)


def asnumpy(a, stream=None, order="C", out=None, *, blocking=True):
    """A host copy of ``a`` (``a.get()`` for a device array)."""
    if type(a) is ndarray:
        return a.get(stream=stream, order=order, out=out, blocking=blocking)
    return _numpy.asarray(a, order=order)


def get_array_module(*args):
    """This module when any argument is a device array, else ``numpy``."""
    import sys

    return sys.modules[__name__] if any(type(arg) is ndarray for arg in args) else _numpy


def from_dlpack(array, *, device=None, copy=None):
    """Zero copy: the array a DLPack exporter of this module shares, on the
    current device and stream (an array of another library, or of the host,
    is refused: the simulation holds no raw pointers)."""
    kind, index = array.__dlpack_device__()
    if kind != 2:
        raise BufferError(f"from_dlpack: the simulated CuPy takes CUDA arrays (device type 2), received device "
                          f"type {kind}")
    stream = _calls.stream_for((), "from_dlpack")
    capsule = array.__dlpack__(stream=stream.ptr)
    if type(capsule) is not _array._Capsule:
        raise TypeError("from_dlpack: the simulated CuPy shares only its own arrays through DLPack.")
    shared = capsule.array
    _calls.stream_for((shared,), "from_dlpack")
    return ndarray._make(shared._array, shared._mem)


def get_default_memory_pool():
    return cuda.memory._default_pool


_default_pinned_memory_pool = cuda.PinnedMemoryPool()
cuda.set_pinned_memory_allocator(_default_pinned_memory_pool.malloc)  # as ``import cupy`` does


def get_default_pinned_memory_pool():
    return _default_pinned_memory_pool


def is_available():
    return cuda.runtime.getDeviceCount() > 0


def _provide_libraries():
    """The cuBLAS and cuDNN doubles (libs/), for code running on this module."""
    import sys

    from minikeras.device import native
    from minikeras.testing.sim_cupy.libs import cublas, cudnn

    module = sys.modules[__name__]
    native.provide(module, "cublas", cublas.library)
    native.provide(module, "cupy_cublas", cublas.wrapper)
    native.provide(module, "cudnn", cudnn.library)


_provide_libraries()
