"""A recording stand-in for the parts of CuPy that GpuDevice drives.

It checks how the GPU device uses CUDA (which device is current, which
stream, which allocator, what waits for what) on a machine without a GPU.
Every call that matters appends a tuple to ``FakeCupy.log``; arrays are
NumPy arrays tagged with the CUDA device that made them, holding a
``data`` pointer from the allocator that was current (``using_allocator``).

The pool (:class:`FakePool`) models CuPy 14.2's ``SingleDeviceMemoryPool``
(cupy/cuda/memory.pyx, tag v14.2.0), the facts GpuDevice depends on:

- every request is rounded up to ``ALLOCATION_UNIT_SIZE`` = 512 bytes
  (``_round_size``); ``used_bytes`` counts rounded chunks;
- free chunks sit in one arena per stream (``_arena(stream_ident)``): a
  block freed by work on one stream is reused only by that stream;
- the limit (``set_limit``) is checked only on a cache miss, against
  ``total_bytes`` (used + cached), in ``_try_block_total_bytes``; on a miss
  over the limit the pool first frees its idle blocks
  (``free_all_blocks``) and retries, then raises OutOfMemoryError;
- ``free_all_blocks`` returns idle, unsplit blocks to the driver; a pool
  that is dropped without it never does (its arenas hold their chunks by
  raw references and the pool has no ``__dealloc__``), so the driver's free
  memory (``runtime.memGetInfo``) shrinks for good.
"""
import contextlib
import threading
import types
import weakref

import numpy

ALLOCATION_UNIT_SIZE = 512


def round_size(size):
    """CuPy's ``_round_size``: up to a multiple of 512 bytes."""
    return -(-int(size) // ALLOCATION_UNIT_SIZE) * ALLOCATION_UNIT_SIZE


class OutOfMemoryError(MemoryError):
    """CuPy's ``cupy.cuda.memory.OutOfMemoryError(size, total, limit=0)``."""

    def __init__(self, size, total=-1, limit=0):
        super().__init__(f"Out of memory allocating {size:,} bytes")
        self.size, self._size, self._total, self._limit = size, size, total, limit


class FakeMemory:
    """``PooledMemory``: ``ptr``, ``size``, ``device_id``, ``pool`` and a
    ``__dict__`` (CuPy declares ``dict __dict__`` on it)."""

    def __init__(self, ptr, size, device_id, pool):
        self.ptr, self.size, self.device_id, self.pool = ptr, size, device_id, pool


class FakePointer:
    """``MemoryPointer``: ``ptr`` and ``mem``."""

    def __init__(self, mem):
        self.mem, self.ptr, self.device_id = mem, mem.ptr, mem.device_id


class FakeCupy:
    """Module-like object: ``fake.cuda.Device``, ``fake.empty``, ..."""

    uint8 = numpy.uint8
    float32 = numpy.float32

    def __init__(self, device_count=2, free_bytes=1 << 30):
        self.log = []
        self.current_device = 0
        self.current_stream = None  # None: the legacy null stream
        self.current_allocator = None
        self.driver_free = [free_bytes] * device_count  # what each GPU's driver has left
        self.total_bytes = 2 * free_bytes
        self._next_pointer = 0x7000_0000
        fake = self

        class ndarray:
            def __init__(self, host, device_id, pointer=None):
                self.host, self.device = host, types.SimpleNamespace(id=device_id)
                self.shape, self.dtype = host.shape, host.dtype
                self.data = pointer if pointer is not None else fake._allocate(host.nbytes)

            def get(self, stream=None):
                fake.log.append(("get", fake.current_device, stream))
                return self.host.copy()

            def astype(self, dtype):
                return fake.array(self.host.astype(dtype))

            def copy(self):
                return fake.array(self, copy=True)

        self.ndarray = ndarray
        self.cuda = types.SimpleNamespace(
            Device=self._device,
            Stream=self._stream,
            using_allocator=self._using_allocator,
            MemoryPool=lambda: FakePool(fake),
            memory=types.SimpleNamespace(OutOfMemoryError=OutOfMemoryError),
            runtime=types.SimpleNamespace(memGetInfo=lambda: (fake.driver_free[fake.current_device], fake.total_bytes),
                                          getDeviceCount=lambda: device_count),
        )
        self.random = types.SimpleNamespace(default_rng=lambda seed=None: FakeGenerator(fake, seed))

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
    def _driver_malloc(self, size):
        """cudaMalloc: a new block from the driver, or None when it is full."""
        if size > self.driver_free[self.current_device]:
            return None
        self.driver_free[self.current_device] -= size
        self._next_pointer += size
        return self._next_pointer - size

    def _allocate(self, nbytes):
        if self.current_allocator is not None:
            pointer = self.current_allocator(nbytes)
        else:  # CuPy's default allocator: a pool of its own, not the device's
            pointer = FakePointer(FakeMemory(0, round_size(nbytes), self.current_device, None))
        self.log.append(("alloc", nbytes, self.current_device, self.current_stream))
        return pointer

    def empty(self, shape, dtype=numpy.float32):
        data = numpy.empty(shape, dtype)
        return self.ndarray(data, self.current_device)

    def asarray(self, value, dtype=None):
        if isinstance(value, self.ndarray):
            return value
        data = numpy.array(value, dtype=dtype)
        array = self.ndarray(data, self.current_device)
        self.log.append(("upload", self.current_device, self.current_stream))
        return array

    def array(self, value, copy=True):
        data = numpy.array(value.host if isinstance(value, self.ndarray) else value, copy=True)
        array = self.ndarray(data, self.current_device)
        self.log.append(("copy", self.current_device, self.current_stream))
        return array


class FakeBitGenerator:
    """CuPy 14.2's cuRAND BitGenerator (cupy/random/_bit_generator.pyx): a
    ``threading.Lock`` in ``lock`` and the generator state in a device array
    ``_state`` (here the PCG64 state words of a NumPy generator)."""

    def __init__(self, fake, seed):
        self.lock = threading.Lock()
        self._seed_seq = numpy.random.SeedSequence(seed)
        words = numpy.random.PCG64(self._seed_seq).state["state"]
        self._state = fake.asarray(numpy.array([words["state"] >> 64, words["state"] & (2**64 - 1),
                                                words["inc"] >> 64, words["inc"] & (2**64 - 1)], dtype=numpy.uint64))

    def draw(self, method, *args, **kwargs):
        high_state, low_state, high_inc, low_inc = (int(word) for word in self._state.host)
        bits = numpy.random.PCG64()
        bits.state = {"bit_generator": "PCG64", "has_uint32": 0, "uinteger": 0,
                      "state": {"state": (high_state << 64) | low_state, "inc": (high_inc << 64) | low_inc}}
        result = getattr(numpy.random.Generator(bits), method)(*args, **kwargs)
        words = bits.state["state"]
        self._state.host[:] = [words["state"] >> 64, words["state"] & (2**64 - 1),
                               words["inc"] >> 64, words["inc"] & (2**64 - 1)]
        return result


class FakeGenerator:
    """``cupy.random.Generator``: its ``bit_generator`` and the methods drawing from it."""

    def __init__(self, fake, seed):
        self.bit_generator = FakeBitGenerator(fake, seed)
        self._binomial_state = None
        self._fake = fake

    def standard_normal(self, size=None, dtype=numpy.float64):
        return self._fake.asarray(self.bit_generator.draw("standard_normal", size, dtype=dtype))

    def random(self, size=None, dtype=numpy.float64):
        return self._fake.asarray(self.bit_generator.draw("random", size, dtype=dtype))


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

    def record(self, event=None):
        event = object() if event is None else event
        self.fake.log.append(("record", self, event))
        return event

    def wait_event(self, event):
        self.fake.log.append(("wait", self, event))

    def synchronize(self):
        self.fake.log.append(("synchronize", self))


class _Block:
    """One cudaMalloc'd block, in the arena of the stream that made it; the
    chunks in use are carved from it (a split block cannot be freed)."""

    def __init__(self, address, size, stream_ident):
        self.address, self.size, self.stream_ident, self.in_use = address, size, stream_ident, 0


class FakePool:
    """CuPy 14.2's memory pool, as the module docstring describes it."""

    def __init__(self, fake):
        self.fake, self.limit, self.device_id = fake, 0, fake.current_device
        self.blocks = []  # every block the driver gave this pool and it still holds
        self.used = 0
        self._ref = weakref.ref(self)

    def _stream_ident(self):
        stream = self.fake.current_stream
        return 0 if stream is None else stream.ptr

    def total(self):
        return sum(block.size for block in self.blocks)

    def malloc(self, size):
        self.fake.log.append(("pool malloc", self, size, self.fake.current_device, self.fake.current_stream))
        size = round_size(size)
        ident = self._stream_ident()
        fits = [b for b in self.blocks if b.stream_ident == ident and b.size - b.in_use >= size]
        block = min(fits, key=lambda b: b.size - b.in_use) if fits else None
        if block is None:  # a cache miss: the limit is checked here, on total bytes
            if self.limit and self.total() + size > self.limit:
                self.free_all_blocks()
                if self.total() + size > self.limit:
                    raise OutOfMemoryError(size, self.total(), self.limit)
            address = self.fake._driver_malloc(size)
            if address is None:
                self.free_all_blocks()
                address = self.fake._driver_malloc(size)
                if address is None:
                    raise OutOfMemoryError(size, self.total(), 0)
            block = _Block(address, size, ident)
            self.blocks.append(block)
        offset = block.in_use
        block.in_use += size
        self.used += size
        mem = FakeMemory(block.address + offset, size, self.fake.current_device, self._ref)
        weakref.finalize(mem, FakePool._free, self._ref, block, size)
        return FakePointer(mem)

    @staticmethod
    def _free(pool_ref, block, size):
        block.in_use -= size  # back to the arena of the stream that allocated it
        pool = pool_ref()
        if pool is not None:
            pool.used -= size

    def free_all_blocks(self, stream=None):
        self.fake.log.append(("pool free_all_blocks", self, self.fake.current_device))
        idle = [b for b in self.blocks if b.in_use == 0 and (stream is None or b.stream_ident == stream.ptr)]
        for block in idle:
            self.blocks.remove(block)
            self.fake.driver_free[self.device_id] += block.size

    def used_bytes(self):
        self.fake.log.append(("pool used_bytes", self, self.fake.current_device))
        return self.used

    def total_bytes(self):
        return self.total()

    def free_bytes(self):
        return self.total() - self.used

    def n_free_blocks(self):
        return sum(1 for block in self.blocks if block.in_use < block.size)

    def set_limit(self, size=None, fraction=None):
        self.fake.log.append(("pool set_limit", self, size, self.fake.current_device))
        self.limit = 0 if size is None else int(size)

    def get_limit(self):
        return self.limit
