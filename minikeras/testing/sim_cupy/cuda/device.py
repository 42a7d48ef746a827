"""``cupy.cuda.Device`` and the library handles of the simulated CUDA.

A cuBLAS handle is made per host thread and device on first need (CuPy's
``get_cublas_handle``, called by every cuBLAS-backed array call), and takes
:data:`_CUBLAS_HANDLE_BYTES` of device memory from the driver, outside any
pool, until the thread ends: on an H200 a reserve that left the driver too
little made the first product of each MirroredModel replica thread fail
with ``CUBLAS_STATUS_ALLOC_FAILED`` (registry.system_headroom is the fix).
"""
import itertools
import threading
import weakref

from minikeras.testing.sim_cupy._errors import CUBLASError as _CUBLASError
from minikeras.testing.sim_cupy.cuda import memory, runtime

_CUBLAS_HANDLE_BYTES = 70 << 20  # what a thread's cuBLAS handle took on an H200 (benchmarks/gpu_session_checks.py)

_local = threading.local()
_handles = itertools.count(0x9000, 0x10)


class Device:
    """``cupy.cuda.Device(device=None)``: ``with Device(i):`` makes device i
    current in this thread, and puts the previous one back after."""

    def __init__(self, device=None):
        if device is None:
            device = runtime.getDevice()
        self.id = int(getattr(device, "id", device))
        self._previous = []

    def __int__(self):
        return self.id

    def __index__(self):
        return self.id

    def __eq__(self, other):
        return isinstance(other, Device) and other.id == self.id

    def __hash__(self):
        return hash(self.id)

    def __repr__(self):
        return f"<CUDA Device {self.id}>"

    def __enter__(self):
        self._previous.append(runtime.getDevice())
        runtime.setDevice(self.id)
        return self

    def __exit__(self, *exc):
        runtime.setDevice(self._previous.pop())
        return False

    def use(self):
        runtime.setDevice(self.id)

    def synchronize(self):
        from minikeras.testing.sim_cupy.cuda import graph

        graph._refuse_unsafe_call("cudaDeviceSynchronize")

    @property
    def compute_capability(self):
        return "90"

    @property
    def mem_info(self):
        with self:
            return runtime.memGetInfo()

    @property
    def cublas_handle(self):
        with self:
            return get_cublas_handle()


class _Handle:
    """One thread's cuBLAS handle on one device: its memory goes back to the
    driver when the thread (and with it the handle) is gone."""

    def __init__(self, device_id):
        self.device_id = device_id
        self.ptr = next(_handles)
        self.stream = 0  # cublasSetStream's
        self.pointer_mode = 0
        with runtime._lock:
            if runtime._free_bytes(device_id) < _CUBLAS_HANDLE_BYTES:
                raise _CUBLASError(3)
            runtime._free[device_id] -= _CUBLAS_HANDLE_BYTES
        _by_pointer[self.ptr] = weakref.ref(self)

    def __del__(self, _exiting=memory._exiting):
        if _exiting:
            return
        _by_pointer.pop(self.ptr, None)
        runtime._free_on(self.device_id, _CUBLAS_HANDLE_BYTES)


_by_pointer = {}  # handle -> weak reference to its _Handle (for the cuBLAS double, libs/cublas.py)


def get_cublas_handle():
    """This thread's cuBLAS handle on the current device (made on first use)."""
    handles = getattr(_local, "cublas", None)
    if handles is None:
        handles = _local.cublas = {}
    device_id = runtime.getDevice()
    handle = handles.get(device_id)
    if handle is None:
        handle = handles[device_id] = _Handle(device_id)
    return handle.ptr


def get_device_id():
    return runtime.getDevice()


def _handle_of(pointer):
    """The cuBLAS handle object behind ``pointer`` (libs/cublas.py), or None."""
    ref = _by_pointer.get(pointer)
    return None if ref is None else ref()
