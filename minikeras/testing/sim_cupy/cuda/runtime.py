"""``cupy.cuda.runtime`` of the simulated CUDA: devices, the current device,
the driver's memory, and CUDA's runtime errors.

The devices are the ones ``MINIKERAS_SIMULATED_GPU=N[xM]`` asks for (N; the
test suite splits each into M logical GPUs itself). Each has
:data:`_MEMORY_BYTES` of memory, handed out by :func:`malloc` (``cudaMalloc``:
unique addresses, never reused, so that a pointer names one allocation) and
given back by :func:`free`; ``memGetInfo`` reports what is left, as the
driver does. The current device is per host thread, as ``cudaSetDevice``'s.
"""
import os
import threading

_ENVIRONMENT_VARIABLE = "MINIKERAS_SIMULATED_GPU"
_MEMORY_BYTES = 4 * 2**30  # what each simulated GPU has

streamCaptureModeGlobal = 0
streamCaptureModeThreadLocal = 1
streamCaptureModeRelaxed = 2
streamDefault = 0
streamNonBlocking = 1
streamLegacy = 1
streamPerThread = 2
eventDefault = 0
eventBlockingSync = 1
eventDisableTiming = 2
eventInterprocess = 4
_errorMemoryAllocation = 2
_errorInvalidDevice = 101
_errorIllegalState = 401
_errorStreamCaptureUnsupported = 900
_errorStreamCaptureInvalidated = 901
_errorStreamCaptureIsolation = 905

# The messages of CuPy 14's CUDARuntimeError (cudaGetErrorName: cudaGetErrorString).
_MESSAGES = {
    2: "cudaErrorMemoryAllocation: out of memory",
    35: "cudaErrorInsufficientDriver: CUDA driver version is insufficient for CUDA runtime version",
    100: "cudaErrorNoDevice: no CUDA-capable device is detected",
    101: "cudaErrorInvalidDevice: invalid device ordinal",
    401: "cudaErrorIllegalState: the operation cannot be performed in the present state",
    700: "cudaErrorIllegalAddress: an illegal memory access was encountered",
    900: "cudaErrorStreamCaptureUnsupported: operation not permitted when stream is capturing",
    901: "cudaErrorStreamCaptureInvalidated: operation failed due to a previous error during capture",
    905: "cudaErrorStreamCaptureIsolation: dependency created on uncaptured work in another stream",
}


class CUDARuntimeError(RuntimeError):
    """``cupy_backends.cuda.api.runtime.CUDARuntimeError(status)``: same
    module, name, message and ``status``, so the library classifies it as
    the real one (device/cuda_errors.py)."""

    def __init__(self, status):
        self.status = status
        super().__init__(_MESSAGES.get(status, f"cudaError{status}: unknown error"))

    def __reduce__(self):
        return (type(self), (self.status,))


CUDARuntimeError.__module__ = "cupy_backends.cuda.api.runtime"


def _requested():
    """``(devices, logical GPUs per device)`` from ``MINIKERAS_SIMULATED_GPU``
    (``"1"``, ``"2"``, ``"1x2"``; another value than a number is one device;
    unset or ``"0"`` is none)."""
    value = os.environ.get(_ENVIRONMENT_VARIABLE, "").strip().lower()
    if value in ("", "0"):
        return 0, 1
    count, _, split = value.partition("x")
    try:
        return max(1, int(count)), max(1, int(split or 1))
    except ValueError:
        return 1, 1


_local = threading.local()
_lock = threading.Lock()
_free = {}  # device id -> bytes the driver has left
_addresses = {}  # device id -> the next fresh address


_seen = [0]  # the most devices ever asked for in this process


def getDeviceCount():
    count = _requested()[0]
    if count > _seen[0]:
        _seen[0] = count
    return count


def _check_device(device):
    # A device once visible stays usable (a test may switch the variable off
    # while the library still holds the devices it built).
    device = int(device)
    if 0 <= device < _seen[0] or 0 <= device < getDeviceCount():
        return device
    raise CUDARuntimeError(_errorInvalidDevice)


def getDevice():
    return getattr(_local, "device", 0)


def setDevice(device):
    _local.device = _check_device(device)


def _free_bytes(device):
    return _free.setdefault(device, _MEMORY_BYTES)


def memGetInfo():
    """``(free, total)`` bytes of the current device."""
    device = _check_device(getDevice())
    with _lock:
        return _free_bytes(device), _MEMORY_BYTES


def malloc(size):
    """``cudaMalloc`` on the current device: a fresh address, or
    CUDARuntimeError(2) when the driver has not that much left."""
    from minikeras.testing.sim_cupy.cuda import graph

    device = _check_device(getDevice())
    graph._refuse_unsafe_call("cudaMalloc")
    with _lock:
        if size > _free_bytes(device):
            raise CUDARuntimeError(_errorMemoryAllocation)
        _free[device] -= size
        address = _addresses.get(device, (0x7F00 + 0x10 * device) << 36)
        _addresses[device] = address + max(512, -(-size // 512) * 512)  # the whole range is this allocation's
    return address


def _free_on(device, size):
    """``cudaFree`` of ``size`` bytes on ``device`` (the simulation's side of
    :func:`free`: the driver counts bytes, the addresses are not reused)."""
    with _lock:
        _free[device] = _free_bytes(device) + size


def deviceGetPCIBusId(device):
    return f"0000:{0x41 + _check_device(device):02x}:00.0"


def getDeviceProperties(device):
    _check_device(device)
    return {"name": b"Simulated GPU (minikeras.testing.sim_cupy)", "totalGlobalMem": _MEMORY_BYTES,
            "major": 9, "minor": 0, "multiProcessorCount": 132}


def runtimeGetVersion():
    return 12090


def driverGetVersion():
    return 12090
