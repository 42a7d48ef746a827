"""Memory accounting and limits for one logical device.

CPU: every array that becomes the data of a Tensor on the device is counted,
once per underlying buffer (views share their owner's count), from the moment
it is wrapped until the buffer is freed (a weak reference tells us when).
Arrays an op saves for backward are counted the same way, and so are the
gradients backward passes from op to op (autograd/engine.py). Not counted:
temporaries inside one op (e.g. im2col blocks), freed before it returns.
A view that covers only part of a buffer nobody counted (a batch sliced
from the user's dataset) counts for the bytes it spans, while it lives.

GPU: each logical GPU has its own CuPy memory pool; "current" is what the
pool has handed out (``used_bytes``: live chunks, each rounded up to 512
bytes as CuPy does; the up-front reserve it caches is not counted), "peak"
the highest value after any allocation in the device's scope (gpu.py's
pool allocator, which reads the pool only when it may have passed the
peak). A limit
(LogicalDeviceConfiguration.memory_limit or a memory fraction) is enforced
by that allocator on the bytes in use, and also set on the pool as a cap on
what it holds in total; CuPy's out-of-memory error is turned into
:class:`~minikeras.errors.ResourceExhaustedError`.
"""
import threading
import weakref

from minikeras.errors import ResourceExhaustedError


class MemoryStats:
    """Bytes held by arrays the library allocated on one logical device.

    Args:
        device_name: canonical device name, for error messages.
        limit: bytes the device may hold, or None for no limit.
    """

    def __init__(self, device_name, limit=None):
        self.device_name = device_name
        self.limit = limit
        self.current = 0
        self.peak = 0
        self._lock = threading.Lock()
        self._tracked = {}  # id(buffer owner) -> its weak reference
        self._sizes = {}  # id(weak reference) -> (id(owner), nbytes)

    def track(self, array):
        """Count ``array``'s buffer until it is freed; raises past the limit."""
        owner = array.base
        if owner is None:
            owner = array
        key = id(owner)
        if key in self._tracked:
            return
        try:
            nbytes = owner.nbytes
            if nbytes > array.nbytes and owner is not array:
                # A part of a buffer the library does not count (a batch sliced
                # from the user's dataset): count the bytes it spans, for as
                # long as it lives, not the whole dataset for as long as it lives.
                low, high = _byte_bounds(array)
                key, nbytes, owner = (key, low, high), high - low, array
                if key in self._tracked:
                    return
            ref = weakref.ref(owner, self._release)
        except (TypeError, AttributeError):  # a buffer owner that is no array (bytes, mmap)
            return
        with self._lock:
            if key in self._tracked:
                return
            in_use = self.current
            if self.limit is not None and in_use + nbytes > self.limit:
                raise ResourceExhaustedError(self.device_name, nbytes, in_use, self.limit)
            self._tracked[key] = ref
            self._sizes[id(ref)] = (key, nbytes)
            in_use += nbytes
            self.current = in_use
            if in_use > self.peak:
                self.peak = in_use

    def allocation_size(self, nbytes):
        """Bytes an allocation of ``nbytes`` holds: exactly that on the host
        (``track`` counts ``nbytes`` as is)."""
        return nbytes

    def _release(self, ref):
        with self._lock:
            entry = self._sizes.pop(id(ref), None)
            if entry is not None:
                key, nbytes = entry
                if self._tracked.get(key) is ref:
                    del self._tracked[key]
                self.current -= nbytes

    def set_limit(self, limit):
        """Change the limit at run time; it may not be below what is held."""
        if limit is not None:
            _check_limit_value(limit, self.device_name)
            if limit < self.current:
                raise ValueError(
                    f"Cannot set the memory limit of {self.device_name} to {int(limit)} bytes: "
                    f"{self.current} bytes are already in use."
                )
        self.limit = None if limit is None else int(limit)

    def info(self):
        """``{"current": bytes, "peak": bytes}``."""
        return {"current": self.current, "peak": self.peak}

    def reset_peak(self):
        self.peak = self.current


class GpuMemoryStats(MemoryStats):
    """Memory of a logical GPU, read from its own CuPy memory pool."""

    def __init__(self, device_name, pool, limit=None, cuda_index=0, cupy=None):
        self.pool = pool
        self.cuda_index = cuda_index
        self.cupy = cupy
        super().__init__(device_name, limit)
        if limit is not None:
            with self._cuda_device():
                pool.set_limit(size=int(limit))

    def _cuda_device(self):
        """Pool calls act on the current CUDA device: make it the pool's
        (logical GPUs on physical GPU 1+ would otherwise read GPU 0)."""
        cupy = self.cupy
        if cupy is None:
            import cupy
        return cupy.cuda.Device(self.cuda_index)

    def allocation_size(self, nbytes):
        """CuPy's pool hands out chunks rounded up to 512 bytes (``_round_size``)."""
        return -(-nbytes // 512) * 512

    def _used(self):
        with self._cuda_device():
            return self.pool.used_bytes()

    @property
    def current(self):
        return self._used()

    @current.setter
    def current(self, value):  # the base class initialiser assigns it
        pass

    # Nothing to count: the pool counts its arrays, and the device's allocator
    # (gpu.py) keeps the peak at every allocation from it. ``track(array)``
    # is a builtin that ignores what it gets (``id``), so the autograd's
    # call per array costs no Python frame on a GPU.
    track = staticmethod(id)

    def set_limit(self, limit):
        super().set_limit(limit)
        with self._cuda_device():
            self.pool.set_limit(size=0 if limit is None else int(limit))

    def reset_peak(self):
        self.peak = self._used()


def _byte_bounds(array):
    """First and one-past-last byte addresses an array's elements span."""
    low = high = array.__array_interface__["data"][0]
    itemsize = array.itemsize
    for extent, stride in zip(array.shape, array.strides):
        if extent == 0:
            return low, low
        if stride < 0:
            low += (extent - 1) * stride
        else:
            high += (extent - 1) * stride
    return low, high + itemsize


def _check_limit_value(limit, device_name):
    if isinstance(limit, bool) or not isinstance(limit, (int, float)):
        raise TypeError(f"A memory limit for {device_name} must be a number of bytes, received {limit!r}.")
    if not 0 <= limit < float("inf"):  # also refuses nan
        raise ValueError(f"A memory limit for {device_name} must be finite and >= 0 bytes, received {limit!r}.")
