"""A recording stand-in for the parts of CuPy that GpuDevice drives.

It checks how the GPU device uses CUDA (which device is current, which
stream, which allocator, what waits for what) on a machine without a GPU.
Every call that matters appends a tuple to ``FakeCupy.log``; arrays are
NumPy arrays tagged with the CUDA device that made them.
"""
import contextlib
import types

import numpy


class OutOfMemoryError(Exception):
    def __init__(self, size):
        super().__init__(f"out of memory allocating {size} bytes")
        self.size = size


class FakeCupy:
    """Module-like object: ``fake.cuda.Device``, ``fake.empty``, ..."""

    uint8 = numpy.uint8
    float32 = numpy.float32

    def __init__(self, device_count=2, free_bytes=1 << 30):
        self.log = []
        self.current_device = 0
        self.current_stream = None  # None: the legacy null stream
        self.current_allocator = None
        self.free_bytes = free_bytes
        fake = self

        class ndarray:
            def __init__(self, data, device_id):
                self.data, self.device = data, types.SimpleNamespace(id=device_id)
                self.shape, self.dtype = data.shape, data.dtype

            def get(self, stream=None):
                fake.log.append(("get", fake.current_device, stream))
                return self.data.copy()

            def astype(self, dtype):
                return ndarray(self.data.astype(dtype), fake.current_device)

            def copy(self):
                return fake.array(self, copy=True)

        self.ndarray = ndarray
        self.cuda = types.SimpleNamespace(
            Device=self._device,
            Stream=self._stream,
            using_allocator=self._using_allocator,
            MemoryPool=lambda: FakePool(fake),
            memory=types.SimpleNamespace(OutOfMemoryError=OutOfMemoryError),
            runtime=types.SimpleNamespace(memGetInfo=lambda: (fake.free_bytes, 2 * fake.free_bytes),
                                          getDeviceCount=lambda: device_count),
        )
        self.random = types.SimpleNamespace(default_rng=lambda seed=None: numpy.random.default_rng(seed))

    # ------------------------------------------------------------ contexts
    def _device(self, index):
        fake = self

        @contextlib.contextmanager
        def current():
            previous, fake.current_device = fake.current_device, index
            try:
                yield
            finally:
                fake.current_device = previous

        return current()

    def _stream(self, non_blocking=False):
        stream = FakeStream(self, non_blocking)
        self.log.append(("new stream", stream, non_blocking))
        return stream

    @contextlib.contextmanager
    def _using_allocator(self, allocator):
        previous, self.current_allocator = self.current_allocator, allocator
        try:
            yield
        finally:
            self.current_allocator = previous

    # -------------------------------------------------------------- arrays
    def _allocate(self, nbytes):
        if self.current_allocator is not None:
            self.current_allocator(nbytes)
        self.log.append(("alloc", nbytes, self.current_device, self.current_stream))

    def empty(self, shape, dtype=numpy.float32):
        data = numpy.empty(shape, dtype)
        self._allocate(data.nbytes)
        return self.ndarray(data, self.current_device)

    def asarray(self, value, dtype=None):
        if isinstance(value, self.ndarray):
            return value
        data = numpy.array(value, dtype=dtype)
        self._allocate(data.nbytes)
        self.log.append(("upload", self.current_device, self.current_stream))
        return self.ndarray(data, self.current_device)

    def array(self, value, copy=True):
        data = numpy.array(value.data if isinstance(value, self.ndarray) else value, copy=True)
        self._allocate(data.nbytes)
        self.log.append(("copy", self.current_device, self.current_stream))
        return self.ndarray(data, self.current_device)


class FakeStream:
    """A stream: a context manager that makes it current; events."""

    def __init__(self, fake, non_blocking):
        self.fake, self.non_blocking = fake, non_blocking
        self.ptr = id(self)

    def __enter__(self):
        self._previous, self.fake.current_stream = self.fake.current_stream, self
        return self

    def __exit__(self, *exc):
        self.fake.current_stream = self._previous
        return False

    def record(self):
        event = object()
        self.fake.log.append(("record", self, event))
        return event

    def wait_event(self, event):
        self.fake.log.append(("wait", self, event))

    def synchronize(self):
        self.fake.log.append(("synchronize", self))


class FakePool:
    """A memory pool that records the CUDA device current at each call."""

    def __init__(self, fake):
        self.fake, self.used, self.limit = fake, 0, 0

    def malloc(self, size):
        if self.limit and self.used + size > self.limit:
            raise OutOfMemoryError(size)
        self.fake.log.append(("pool malloc", self, size, self.fake.current_device, self.fake.current_stream))
        self.used += size
        return size

    def used_bytes(self):
        self.fake.log.append(("pool used_bytes", self, self.fake.current_device))
        return self.used

    def set_limit(self, size=0):
        self.fake.log.append(("pool set_limit", self, size, self.fake.current_device))
        self.limit = size
