"""``cupy.cuda.memory`` of the simulated CUDA: CuPy 14.2's memory pool
(cupy/cuda/memory.pyx, tag v14.2.0), allocators and memory pointers.

Blocks are bookkeeping only (addresses and sizes from the simulated driver,
``runtime.malloc``); an array's bytes stay in its NumPy buffer, which the
block it was allocated for points to (``host``). What the pool models,
because the library depends on each:

- every request is rounded up to 512 bytes (``_round_size``), and
  ``used_bytes`` counts the rounded chunks in use;
- free chunks sit in one arena per stream (``_arena(stream_ident)``, the
  stream current at the allocation): a freed chunk goes back to the arena
  of the stream that allocated it and serves only that stream again; the
  best fit (the smallest free chunk at least as large) is split, and a
  freed chunk merges with its free neighbours of the same cudaMalloc;
- the limit (``set_limit``) is checked only on a cache miss, against
  ``total_bytes`` (cached and in use); past it the pool frees its idle
  unsplit chunks (``free_all_blocks``) and retries, then raises
  :class:`OutOfMemoryError`; so does a miss the driver cannot serve;
- ``free_all_blocks`` gives idle, unsplit chunks back to the driver; a pool
  dropped without it never does (its arenas hold their chunks by raw
  references and it has no ``__dealloc__``): the driver's free memory
  shrinks for good (and, unlike CuPy, the simulation keeps even the chunks
  still in use then: Memory's docstring says why);
- ``PooledMemory`` has a ``__dict__`` (the library tags it with its owner).

The race detector (``_races.py``) keeps each block's last accesses; a freed
block's accesses by other streams are checked when its arena's stream
reuses any of its bytes.
"""
import atexit
import bisect
import threading
import weakref

from minikeras.testing.sim_cupy import _races
from minikeras.testing.sim_cupy.cuda import runtime, stream as stream_module

_ALLOCATION_UNIT_SIZE = 512
_exiting = []  # set at interpreter exit: nothing is freed then (CuPy's _exit_mode)
atexit.register(_exiting.append, True)


def _round_size(size):
    return -(-int(size) // _ALLOCATION_UNIT_SIZE) * _ALLOCATION_UNIT_SIZE


class OutOfMemoryError(MemoryError):
    """``cupy.cuda.memory.OutOfMemoryError(size, total, limit=0)``."""

    def __init__(self, size, total, limit=0):
        self._size, self._total, self._limit = size, total, limit
        if limit == 0:
            message = f"Out of memory allocating {size:,} bytes"
            if total != -1:
                message += f" (allocated so far: {total:,} bytes)."
        else:
            message = (f"Out of memory allocating {size:,} bytes (allocated so far: {total:,} bytes, limit set to: "
                       f"{limit:,} bytes).")
        super().__init__(message)

    def __reduce__(self):
        return (type(self), (self._size, self._total, self._limit))


class BaseMemory:
    """Device memory: ``ptr``, ``size``, ``device_id``; and for the
    simulation the NumPy buffer it holds (``host``) and its race record."""

    __slots__ = ("ptr", "size", "device_id", "_host", "_race", "__weakref__")

    def __int__(self):
        return self.ptr

    def __reduce_ex__(self, protocol):
        # CuPy's memory objects are Cython classes without pickling: copying
        # one (copy.copy, deepcopy, pickle) fails, as here. A copy that freed
        # the block on its death would free memory the original still uses.
        raise TypeError(f"cannot pickle {type(self).__name__!r} object")

    @property
    def device(self):
        from minikeras.testing.sim_cupy.cuda.device import Device

        return Device(self.device_id)


class Memory(BaseMemory):
    """``cupy.cuda.Memory(size)``: one cudaMalloc, freed with the object.

    A pool's memory is given back only by ``free_all_blocks`` (or never, when
    the pool is dropped): Python runs ``__del__`` on every object of a
    garbage cycle before it knows that a freed chunk went back to its arena,
    so a ``__del__`` here could free memory the pool still holds."""

    __slots__ = ("_pooled",)

    def __init__(self, size, pooled=False):
        self.ptr = 0
        self.size = int(size)
        self.device_id = runtime.getDevice()
        self._host = self._race = None
        self._pooled = pooled
        if self.size > 0:
            self.ptr = runtime.malloc(self.size)

    def _release(self):
        if self.ptr:
            runtime._free_on(self.device_id, self.size)
            self.ptr = 0

    def __del__(self, _exiting=_exiting):
        if not _exiting and not self._pooled:
            self._release()


_live = {}  # address of a pooled block in use -> weak reference to its PooledMemory


class PooledMemory(BaseMemory):
    """A chunk handed out by a pool; back to its arena when the object dies."""

    __slots__ = ("pool", "identity", "_chunk", "__dict__")

    def __init__(self, chunk, pool):
        self._chunk = chunk
        self.ptr = chunk.mem.ptr + chunk.offset
        self.size = chunk.size
        self.device_id = chunk.mem.device_id
        self.pool = pool
        self.identity = "Memory"
        self._host = self._race = None
        _live[self.ptr] = weakref.ref(self)

    def free(self):
        ptr = self.ptr
        if ptr == 0:
            return
        self.ptr = 0
        if _live.get(ptr) is not None:
            del _live[ptr]
        pool = self.pool()
        if pool is not None:
            pool._free(self._chunk, self._race)

    def __del__(self, _exiting=_exiting):
        if not _exiting:
            self.free()


class MemoryPointer:
    """``cupy.cuda.MemoryPointer(mem, offset)``: ``mem`` and ``ptr``."""

    __slots__ = ("mem", "ptr", "device_id")

    def __init__(self, mem, offset):
        self.mem = mem
        self.ptr = mem.ptr + offset
        self.device_id = mem.device_id

    def __int__(self):
        return self.ptr

    def __reduce_ex__(self, protocol):
        raise TypeError("cannot pickle 'MemoryPointer' object")

    def __add__(self, offset):
        return MemoryPointer(self.mem, self.ptr - self.mem.ptr + offset)

    def __repr__(self):
        return f"<MemoryPointer 0x{self.ptr:x} device={self.device_id} mem={self.mem!r}>"

    @property
    def device(self):
        return self.mem.device


class _Chunk:
    __slots__ = ("mem", "offset", "size", "arena", "prev", "next", "free")

    def __init__(self, mem, offset, size, arena):
        self.mem, self.offset, self.size, self.arena = mem, offset, size, arena
        self.prev = self.next = None
        self.free = False

    def split(self, size):
        if self.size == size:
            return None
        remaining = _Chunk(self.mem, self.offset + size, self.size - size, self.arena)
        self.size = size
        if self.next is not None:
            remaining.next = self.next
            remaining.next.prev = remaining
        self.next = remaining
        remaining.prev = self
        return remaining

    def merge_next(self):
        self.size += self.next.size
        self.next = self.next.next
        if self.next is not None:
            self.next.prev = self


class _Arena:
    """The free chunks of one stream, by size (CuPy's ``std::set`` of
    (size, chunk)); and the freed blocks other streams still used."""

    __slots__ = ("ident", "sizes", "bins", "pending")

    def __init__(self, ident):
        self.ident = ident
        self.sizes = []  # sorted distinct sizes of free chunks
        self.bins = {}  # size -> [chunks]
        self.pending = []  # (start, end, accesses) of freed blocks with other streams' accesses

    def _insert(self, chunk):
        chunk.free = True
        bin_ = self.bins.get(chunk.size)
        if bin_ is None:
            bin_ = self.bins[chunk.size] = []
            bisect.insort(self.sizes, chunk.size)
        bin_.append(chunk)

    def _remove(self, chunk):
        chunk.free = False
        bin_ = self.bins[chunk.size]
        bin_.remove(chunk)
        if not bin_:
            del self.bins[chunk.size]
            del self.sizes[bisect.bisect_left(self.sizes, chunk.size)]

    def insert_chunk(self, chunk, merge=True):
        if merge:
            while chunk.next is not None and chunk.next.free:
                self._remove(chunk.next)
                chunk.merge_next()
            while chunk.prev is not None and chunk.prev.free:
                self._remove(chunk.prev)
                chunk = chunk.prev
                chunk.merge_next()
        self._insert(chunk)

    def get_chunk(self, size):
        index = bisect.bisect_left(self.sizes, size)
        if index == len(self.sizes):
            return None
        chunk = self.bins[self.sizes[index]][-1]
        self._remove(chunk)
        remaining = chunk.split(size)
        if remaining is not None:
            self.insert_chunk(remaining, merge=False)
        return chunk

    def free_all(self):
        freed = 0
        for size in list(self.sizes):
            for chunk in list(self.bins.get(size, ())):
                if chunk.next is None and chunk.prev is None:
                    self._remove(chunk)
                    freed += chunk.size
                    chunk.mem._release()  # cudaFree
        return freed

    def check_reuse(self, chunk, stream):
        start = chunk.mem.ptr + chunk.offset
        end = start + chunk.size
        overlapping = [entry for entry in self.pending if entry[0] < end and start < entry[1]]
        if overlapping:
            self.pending = [entry for entry in self.pending if not (entry[0] < end and start < entry[1])]
            for _, _, accesses in overlapping:
                _races.check_reuse(stream, accesses, "an allocation")


class _SingleDeviceMemoryPool:
    """CuPy 14.2's ``SingleDeviceMemoryPool`` (module docstring)."""

    def __init__(self, device_id):
        self._device_id = device_id
        self._arenas = {}
        self._in_use = 0
        self._total = 0
        self._limit = 0
        self._lock = threading.RLock()
        self._busy = False
        self._pending = []  # (chunk, race record) freed while the pool was busy (CuPy's pending frees)
        self._weakref = weakref.ref(self)

    def malloc(self, size):
        size = _round_size(size)
        if size == 0:
            return MemoryPointer(Memory(0), 0)
        stream = stream_module._current()
        with self._lock:
            self._busy = True
            try:
                self._drain()
                arena = self._arenas.get(stream.ptr)
                if arena is None:
                    arena = self._arenas[stream.ptr] = _Arena(stream.ptr)
                chunk = arena.get_chunk(size)
                if chunk is not None and arena.pending:
                    try:
                        arena.check_reuse(chunk, stream)
                    except _races.RaceError:
                        arena.insert_chunk(chunk)
                        raise
                if chunk is None:
                    chunk = _Chunk(self._try_malloc(size), 0, size, arena)
                self._in_use += chunk.size
            finally:
                self._busy = False
        return MemoryPointer(PooledMemory(chunk, self._weakref), 0)

    def _try_malloc(self, size):
        limit = self._limit
        if limit and self._total + size > limit:
            self.free_all_blocks()
            if self._total + size > limit:
                raise OutOfMemoryError(size, self._total, limit)
        try:
            memory = Memory(size, pooled=True)
        except runtime.CUDARuntimeError as error:
            if error.status != runtime._errorMemoryAllocation:
                raise
            self.free_all_blocks()
            try:
                memory = Memory(size, pooled=True)
            except runtime.CUDARuntimeError as again:
                if again.status != runtime._errorMemoryAllocation:
                    raise
                raise OutOfMemoryError(size, self._total, limit) from None
        self._total += size
        return memory

    def _free(self, chunk, record):
        self._in_use -= chunk.size
        self._pending.append((chunk, record))
        if not self._busy and self._lock.acquire(blocking=False):
            try:
                self._drain()
            finally:
                self._lock.release()

    def _drain(self):
        """Put the chunks freed meanwhile back into their arenas (merged)."""
        while self._pending:
            chunk, record = self._pending.pop()
            arena = chunk.arena
            if record is not None:
                accesses = [access for access in _races.foreign_accesses(record)
                            if access.stream.ptr != arena.ident]
                if accesses:
                    start = chunk.mem.ptr + chunk.offset
                    arena.pending.append((start, start + chunk.size, accesses))
                    del arena.pending[:-10000]
            arena.insert_chunk(chunk)

    def free_all_blocks(self, stream=None):
        with self._lock:
            self._drain()
            if stream is None:
                arenas = list(self._arenas.values())
            else:
                arena = self._arenas.get(stream.ptr)
                arenas = [] if arena is None else [arena]
            freed = sum(arena.free_all() for arena in arenas)
            self._total -= freed

    def n_free_blocks(self):
        with self._lock:
            self._drain()
        return sum(len(bin_) for arena in self._arenas.values() for bin_ in arena.bins.values())

    def used_bytes(self):
        return self._in_use

    def free_bytes(self):
        return self._total - self._in_use

    def total_bytes(self):
        return self._total

    def set_limit(self, size=None, fraction=None):
        if size is None:
            if fraction is None:
                size = 0
            else:
                if not 0 <= fraction <= 1:
                    raise ValueError(f"memory limit fraction out of range: {fraction}")
                size = fraction * runtime.memGetInfo()[1]
        elif fraction is not None:
            raise ValueError("size and fraction cannot be specified at one time")
        if size < 0:
            raise ValueError(f"memory limit size out of range: {size}")
        self._limit = int(size)

    def get_limit(self):
        return self._limit


class MemoryPool:
    """``cupy.cuda.MemoryPool``: one single-device pool per CUDA device, each
    call acting on the current device's."""

    def __init__(self, allocator=None):
        self._pools = {}

    def _device_pool(self):
        device = runtime.getDevice()
        pool = self._pools.get(device)
        if pool is None:
            pool = self._pools[device] = _SingleDeviceMemoryPool(device)
        return pool

    def malloc(self, size):
        return self._device_pool().malloc(size)

    def free_all_blocks(self, stream=None):
        self._device_pool().free_all_blocks(stream)

    def free_all_free(self):
        self.free_all_blocks()

    def n_free_blocks(self):
        return self._device_pool().n_free_blocks()

    def used_bytes(self):
        return self._device_pool().used_bytes()

    def free_bytes(self):
        return self._device_pool().free_bytes()

    def total_bytes(self):
        return self._device_pool().total_bytes()

    def set_limit(self, size=None, fraction=None):
        self._device_pool().set_limit(size, fraction)

    def get_limit(self):
        return self._device_pool().get_limit()


def _malloc(size):
    """The raw allocator (no pool): one cudaMalloc per allocation."""
    return MemoryPointer(Memory(size), 0)


_default_pool = MemoryPool()
_current_allocator = [_default_pool.malloc]
_local = threading.local()


def get_allocator():
    allocator = getattr(_local, "allocator", None)
    return _current_allocator[0] if allocator is None else allocator


def set_allocator(allocator=None):
    if getattr(_local, "allocator", None) is not None:
        raise ValueError("Can't change the global allocator inside `using_allocator` context manager")
    _current_allocator[0] = _malloc if allocator is None else allocator


class _AllocatorScope:
    """``cupy.cuda.using_allocator(allocator=None)``: this thread's allocator
    inside the block (None: the raw allocator, no pool)."""

    __slots__ = ("_allocator", "_previous")

    def __init__(self, allocator=None):
        self._allocator = _malloc if allocator is None else allocator

    def __enter__(self):
        self._previous = getattr(_local, "allocator", None)
        _local.allocator = self._allocator

    def __exit__(self, *exc):
        _local.allocator = self._previous
        return False


def alloc(size):
    """Allocate ``size`` bytes with the current allocator."""
    return get_allocator()(size)


def _block_at(pointer, nbytes):
    """``(block, offset)``: the live pooled block holding ``nbytes`` bytes from
    device address ``pointer``, with its NumPy buffer (``block._host``).

    Raises:
        ValueError: no live block holds them (a CUDA library given this
            pointer would touch memory it does not own).
    """
    for start, ref in list(_live.items()):
        block = ref()
        if block is None or not start <= pointer < start + block.size:
            continue
        host = block._host
        if host is not None and pointer + nbytes <= start + host.nbytes:
            return block, pointer - start
        break
    raise ValueError(f"Simulated CUDA: {nbytes} bytes at {pointer:#x} are not inside a live device buffer: a CUDA "
                     "library given this pointer would read or write memory it does not own.")


def _host_view(pointer, count, dtype):
    """The ``count`` elements of ``dtype`` at device address ``pointer``, as a
    writable NumPy view of the buffer that holds them: what a CUDA library
    given the pointer (NCCL, cuBLAS, cuDNN) touches."""
    import numpy

    dtype = numpy.dtype(dtype)
    block, offset = _block_at(pointer, count * dtype.itemsize)
    host = block._host
    flat = (host if host.flags.c_contiguous else host.T).reshape(-1).view(numpy.uint8)
    return flat[offset:offset + count * dtype.itemsize].view(dtype)
