"""``cupy.cuda.pinned_memory`` of the simulated CUDA: page-locked host memory
(cupy/cuda/pinned_memory.pyx, tag v14.2.0) and the hazard that comes with it.

What CuPy does, and the simulation with it:

- ``alloc_pinned_memory(size)`` calls the current pinned allocator, which
  ``import cupy`` sets to the default :class:`PinnedMemoryPool`'s ``malloc``
  (``cupy.get_default_pinned_memory_pool()``): sizes are rounded up to a
  power of two of 512-byte units, and a block whose pointer dies goes back
  to the pool and is handed out again at once, whatever copy still reads it;
- the :class:`PinnedMemoryPointer` exports its bytes through the buffer
  protocol, so ``numpy.frombuffer(pointer, dtype, count)`` is a NumPy array
  in pinned memory. (A Python class has no buffer protocol before Python
  3.12: the simulated pointer is a 1-D uint8 NumPy array of the block's
  bytes with CuPy's ``mem``, ``ptr`` and ``size()``, its only use here.)

The hazard: ``ndarray.set(arr, stream)`` from pinned memory is a true
``cudaMemcpyAsync``: the host returns at once and the copy engine reads
``arr`` when the stream reaches the copy, so the host may not write ``arr``
again until it knows the copy is done (``Event.synchronize()``,
``Stream.synchronize()``, ``Event.done``). (From pageable memory CUDA stages
the bytes before it returns: no hazard, and none is modelled.) The
simulation copies at once, so that code ordered right computes what a card
computes, and keeps the bytes each pending copy read; the host's view of
the streams is a vector clock (:func:`_host_waits`, merged at every host
synchronisation). A pending copy whose source bytes changed before the host
saw it complete is a :class:`~minikeras.testing.sim_cupy._races.RaceError`,
raised at the next copy from that block and at the synchronisation that
retires it. :func:`_allocations` counts the page-locked allocations
(``cudaHostAlloc``), for tests (``simulation.pinned_allocations``).
"""
import threading
import weakref

import numpy

from minikeras.testing.sim_cupy import _races

_ALLOCATION_UNIT_SIZE = 512
_lock = threading.RLock()
_blocks = {}  # host address of a live PinnedMemory -> weak reference to it
_pending = weakref.WeakSet()  # PinnedMemory blocks with copies the host has not seen complete
_host_clock = {}  # stream race id -> the tick of that stream the host knows complete
_count = [0]  # page-locked allocations made (cudaHostAlloc)


class PinnedMemory:
    """``PinnedMemory(size, flags=0)``: one page-locked host allocation."""

    def __init__(self, size, flags=0):
        self.size = int(size)
        self._host = numpy.empty(self.size, numpy.uint8)
        self._copies = []  # (stream, tick, op, start, snapshot) of copies reading it, not yet seen by the host
        self.ptr = 0
        if self.size > 0:
            self.ptr = self._host.__array_interface__["data"][0]
            with _lock:
                _count[0] += 1
                _blocks[self.ptr] = weakref.ref(self)

    def __del__(self, _blocks=_blocks):  # bound now: at interpreter exit the module's globals are gone
        _blocks.pop(self.ptr, None)

    def __int__(self):
        return self.ptr


class PinnedMemoryPointer(numpy.ndarray):
    """``PinnedMemoryPointer(mem, offset)``: ``mem``, ``ptr``, ``size()``,
    and the block's bytes from ``offset`` (module docstring)."""

    def __new__(cls, mem, offset):
        raw = getattr(mem, "mem", mem)  # a pool's PooledPinnedMemory holds the PinnedMemory
        pointer = raw._host[offset:].view(cls)
        pointer.mem = mem
        pointer.ptr = mem.ptr + offset
        return pointer

    def __init__(self, mem, offset):
        pass

    def __array_finalize__(self, obj):
        pass

    def __int__(self):
        return self.ptr

    def __add__(self, offset):
        return PinnedMemoryPointer(self.mem, self.ptr - self.mem.ptr + int(offset))

    def size(self):
        return self.mem.size - (self.ptr - self.mem.ptr)

    def __repr__(self):
        return f"<PinnedMemoryPointer 0x{self.ptr:x} size={self.size()}>"


def _malloc(size):
    """The raw allocator (no pool): one cudaHostAlloc per allocation."""
    return PinnedMemoryPointer(PinnedMemory(size, 1), 0)


_current_allocator = [_malloc]


def alloc_pinned_memory(size):
    """Allocate ``size`` bytes of pinned memory with the current allocator."""
    return _current_allocator[0](size)


def set_pinned_memory_allocator(allocator=None):
    _current_allocator[0] = _malloc if allocator is None else allocator


class PooledPinnedMemory(PinnedMemory):
    """A pool's block: back to its pool when the object dies."""

    def __init__(self, mem, pool):
        self.ptr = mem.ptr
        self.size = mem.size
        self.pool = pool
        self.mem = mem

    def free(self):
        pool = self.pool()
        if pool is not None and self.ptr != 0:
            pool._give_back(self.mem, self.size)
        self.ptr = 0
        self.size = 0

    __del__ = free


def _clp2(value):
    return 1 << max(int(value) - 1, 0).bit_length()


class PinnedMemoryPool:
    """``PinnedMemoryPool(allocator=_malloc)``: freed blocks kept by size and
    handed out again at once (no stream ordering: CuPy's)."""

    def __init__(self, allocator=_malloc):
        self._free = {}
        self._alloc = allocator
        self._weakref = weakref.ref(self)

    def malloc(self, size):
        if size == 0:
            return PinnedMemoryPointer(PinnedMemory(0), 0)
        unit = _ALLOCATION_UNIT_SIZE
        size = _clp2(-(-int(size) // unit) * unit)
        with _lock:
            free = self._free.get(size)
            mem = free.pop() if free else self._alloc(size).mem
        return PinnedMemoryPointer(PooledPinnedMemory(mem, self._weakref), 0)

    def _give_back(self, mem, size):
        self._free.setdefault(size, []).append(mem)

    def free_all_blocks(self):
        self._free.clear()

    def n_free_blocks(self):
        return sum(len(blocks) for blocks in self._free.values())


def _block_of(host):
    """``(PinnedMemory, offset)`` holding the NumPy array ``host``, or None
    (pageable memory)."""
    if host.nbytes == 0:
        return None
    address = host.__array_interface__["data"][0]
    for start, ref in list(_blocks.items()):
        block = ref()
        if block is not None and start <= address < start + block.size:
            return block, address - start
    return None


def _copy_from_host(stream, op, host):
    """Record the asynchronous copy ``op`` on ``stream`` reading ``host``
    (called after the race detector ticked ``stream`` for it): checks the
    block's earlier pending copies, then keeps this one's bytes."""
    found = _block_of(host)
    if found is None:
        return
    block, offset = found
    with _lock:
        _check(block)
        snapshot = bytes(block._host[offset:offset + host.nbytes])
        block._copies.append((stream, stream.clock[stream.race_id], op, offset, snapshot))
        _pending.add(block)


def _host_waits(clock):
    """The host waited for the work a stream or event ``clock`` covers: the
    pending copies it covers are checked and retired."""
    with _lock:
        for stream_id, tick in clock.items():
            if _host_clock.get(stream_id, 0) < tick:
                _host_clock[stream_id] = tick
        for block in list(_pending):
            _check(block)
            if not block._copies:
                _pending.discard(block)


def _seen(stream, tick):
    return _host_clock.get(stream.race_id, 0) >= tick


def _check(block):
    """Raise if the host changed the bytes a pending copy of ``block`` reads;
    drop the copies the host has seen complete."""
    kept = []
    for stream, tick, op, start, snapshot in block._copies:
        if bytes(block._host[start:start + len(snapshot)]) != snapshot:
            block._copies = []
            raise _races.RaceError(
                f"Simulated CUDA race: the host wrote pinned memory that {op} on {_races._name(stream)} was still "
                "copying to the device (cudaMemcpyAsync from pinned memory returns at once; the copy engine reads "
                "the buffer later). Wait for the copy (an event recorded after it: event.synchronize()) before "
                "writing the buffer again.")
        if not _seen(stream, tick):
            kept.append((stream, tick, op, start, snapshot))
    block._copies = kept


def _allocations():
    """Page-locked allocations made so far (cudaHostAlloc calls)."""
    return _count[0]
