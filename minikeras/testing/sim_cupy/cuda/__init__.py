"""``cupy.cuda`` of the simulated CUDA (minikeras.testing.sim_cupy): devices,
streams and events, the memory pool and allocators, pinned host memory,
graph capture, and the runtime, NVRTC and NCCL modules, each with CuPy
14.2's names and signatures (tests/backend/test_cupy_api.py checks them
against the installed CuPy)."""
from minikeras.testing.sim_cupy.cuda import (  # noqa: F401
    compiler, device, graph, memory, nccl, nvrtc, pinned_memory, runtime, stream,
)
from minikeras.testing.sim_cupy.cuda.device import Device, get_cublas_handle, get_device_id
from minikeras.testing.sim_cupy.cuda.graph import Graph
from minikeras.testing.sim_cupy.cuda.memory import (
    BaseMemory, Memory, MemoryPointer, MemoryPool, alloc, get_allocator, set_allocator,
)
from minikeras.testing.sim_cupy.cuda.pinned_memory import (
    PinnedMemory, PinnedMemoryPointer, PinnedMemoryPool, alloc_pinned_memory, set_pinned_memory_allocator,
)
from minikeras.testing.sim_cupy.cuda.stream import Event, Stream, get_current_stream


def using_allocator(allocator=None):
    """This thread's allocator inside the ``with`` block (None: no pool)."""
    return memory._AllocatorScope(allocator)


def is_available():
    return runtime.getDeviceCount() > 0
