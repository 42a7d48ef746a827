"""Physical and logical devices."""
import contextlib
from dataclasses import dataclass

import numpy

from minikeras.device.names import canonical_name


@dataclass(frozen=True)
class PhysicalDevice:
    """A piece of hardware, like ``tf.config.PhysicalDevice``.

    Attributes:
        name: ``/physical_device:GPU:0``.
        device_type: ``"CPU"`` or ``"GPU"``.
        index: position among the visible devices of that type.
        total_memory: bytes of memory the hardware has (host RAM for the CPU).
    """

    name: str
    device_type: str
    index: int = 0
    total_memory: int = 0

    @property
    def kind(self):
        return self.device_type.lower()


class LogicalDeviceConfiguration:
    """How one logical device carved out of a physical device is set up.

    Args:
        memory_limit: megabytes (2**20 bytes) the logical device may hold,
            as in TensorFlow; None for no limit.
    """

    def __init__(self, memory_limit=None):
        if memory_limit is not None:
            if isinstance(memory_limit, bool) or not isinstance(memory_limit, (int, float)):
                raise TypeError(f"memory_limit must be a number of megabytes or None, received {memory_limit!r}.")
            if not 0 < memory_limit < float("inf"):
                # inf (or nan) would pass here and then fail every allocation
                # with an OverflowError converting it to bytes.
                raise ValueError(f"memory_limit must be finite and > 0 megabytes, received {memory_limit!r}.")
        self.memory_limit = memory_limit

    @property
    def memory_limit_bytes(self):
        return None if self.memory_limit is None else int(self.memory_limit * 2**20)

    def __repr__(self):
        return f"LogicalDeviceConfiguration(memory_limit={self.memory_limit})"

    def __eq__(self, other):
        return isinstance(other, LogicalDeviceConfiguration) and other.memory_limit == self.memory_limit

    def __hash__(self):
        return hash(self.memory_limit)


class Device:
    """A logical device: where tensors live and ops run.

    ``device.name`` is short (``"gpu:1"``), ``str(device)`` canonical
    (``"/device:GPU:1"``). ``device.xp`` is the array module (numpy or cupy).

    Attributes:
        kind: ``"cpu"`` or ``"gpu"``.
        index: logical index among devices of its kind.
        physical: the PhysicalDevice it is carved from.
        memory: its MemoryStats.
    """

    def __init__(self, kind, index, physical, memory, xp=numpy, pool=None, stream=None):
        self.kind = kind
        self.index = index
        self.physical = physical
        self.memory = memory
        self.xp = xp
        self.pool = pool
        self.stream = stream
        self.name = f"{kind}:{index}"
        self.canonical = canonical_name(kind, index)
        self.device_type = kind.upper()
        self.rng = None  # set by minikeras.random on first use

    @property
    def is_gpu(self):
        return self.kind == "gpu"

    def activate(self):
        """Context that makes CuPy allocate and run on this logical device.

        On the CPU it does nothing.
        """
        if self.kind != "gpu":
            return contextlib.nullcontext()
        return _gpu_context(self)

    def synchronize(self):
        """Wait for the work queued on this device to finish."""
        if self.stream is not None:
            self.stream.synchronize()

    def __repr__(self):
        return f"Device({self.canonical!r})"

    def __str__(self):
        return self.canonical


@contextlib.contextmanager
def _gpu_context(device):
    cupy = device.xp
    allocator = device.__dict__.get("_allocator")
    if allocator is None:
        allocator = device._allocator = _pool_allocator(device)
    with cupy.cuda.Device(device.physical.index), device.stream, cupy.cuda.using_allocator(allocator):
        yield


def _pool_allocator(device):
    """The logical GPU's pool as CuPy's allocator: every allocation in its
    scope (ops, backward, optimizer slots, copies) that goes past the pool's
    limit raises ResourceExhaustedError instead of CuPy's OutOfMemoryError,
    and the peak is read at each allocation."""
    from minikeras.errors import ResourceExhaustedError

    pool, memory = device.pool, device.memory
    out_of_memory = device.xp.cuda.memory.OutOfMemoryError

    def malloc(size):
        try:
            pointer = pool.malloc(size)
        except out_of_memory:
            raise ResourceExhaustedError(device.canonical, size, pool.used_bytes(), memory.limit) from None
        used = pool.used_bytes()
        if used > memory.peak:
            memory.peak = used
        return pointer

    return malloc
