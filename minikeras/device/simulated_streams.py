"""Streams, events and the race detector of the strict simulated GPU.

Execution stays synchronous NumPy; what is simulated is *ordering*. Each
logical simulated GPU owns a :class:`SimulatedStream` (as each real logical
GPU owns one CuPy stream) and the work issued inside its ``activate()`` is
issued to that stream. A real GPU runs two streams' work in any
interleaving unless an event or a synchronisation orders them, so the
simulation keeps a vector clock per stream (one counter per stream it has
heard of): every operation ticks its stream's own counter;
``stream.record()`` snapshots the clock into an event; ``wait_event(event)``
merges the snapshot, which is the happens-before edge.

Every device buffer remembers its last writer (stream, tick, op) and, per
stream, its last reader. An operation on stream S that

- reads a buffer whose last write was on another stream W, when S has not
  (through events) seen W's clock reach that write, or
- writes a buffer read or written on another stream without such an edge,

raises :class:`SimulatedRaceError` naming both devices, both operations and
the fix. This is the specification of ``device/gpu.py``'s race-freedom
rules, checked on every simulated run: a read of gpu:1's array on gpu:0's
stream without an event (rule 4) is caught here, and so is a copy back into
a block another stream still reads.

Frees: CuPy hands a freed block back to the arena of the stream that
allocated it (memory.pyx, ``_arena(stream_ident)``), and the next
allocation on that stream may reuse it at once. So when a buffer dies while
another stream's read of it is not yet ordered before its home stream, the
home stream's next operation (the reuse) is a race, unless an event made it
wait for that read first (rule 4's second event). This is conservative: the
next operation might not reuse that very block.

Not modelled: the legacy null stream (the simulated GPU refuses work
outside ``activate()`` instead).
"""
import functools
import itertools
import threading
import weakref

import numpy

_ids = itertools.count(1)
_lock = threading.RLock()  # re-entrant: a buffer may die (and report) inside access()


class SimulatedRaceError(RuntimeError):
    """Two streams touched one buffer with nothing ordering them."""


class SimulatedEvent:
    """``cupy.cuda.Event`` stand-in: a snapshot of a stream's clock."""

    __slots__ = ("clock",)

    def __init__(self, clock=None):
        self.clock = dict(clock or {})

    def synchronize(self):
        """The host waits for the event (nothing to merge into: no host clock)."""


class SimulatedStream:
    """``cupy.cuda.Stream`` stand-in for one logical simulated GPU.

    Args:
        device_name: canonical name of the logical device, for messages.
    """

    non_blocking = False

    def __init__(self, device_name):
        self.id = next(_ids)
        self.ptr = 0x5000 + self.id  # a stream handle, as ``Stream.ptr``
        self.device_name = device_name
        self.clock = {self.id: 0}

    def tick(self):
        self.clock[self.id] += 1
        return self.clock[self.id]

    def record(self, event=None):
        """An event capturing all work issued to this stream so far."""
        with _lock:
            if event is None:
                event = SimulatedEvent()
            event.clock = dict(self.clock)
        return event

    def wait_event(self, event):
        """Later work on this stream waits for ``event`` (happens-before)."""
        with _lock:
            for stream_id, tick in event.clock.items():
                if self.clock.get(stream_id, 0) < tick:
                    self.clock[stream_id] = tick

    def synchronize(self):
        """The host waits for this stream."""

    def seen(self, other, tick):
        return other is self or self.clock.get(other.id, 0) >= tick

    def __repr__(self):
        return f"<simulated stream of {self.device_name}>"


class _Access:
    __slots__ = ("stream", "tick", "op")

    def __init__(self, stream, tick, op):
        self.stream, self.tick, self.op = stream, tick, op


class _Record:
    __slots__ = ("owner", "write", "reads", "home")

    def __init__(self, owner):
        self.owner = owner  # weak reference to the NumPy buffer
        self.write = None
        self.reads = {}  # stream id -> _Access
        self.home = None  # the stream whose pool arena the block returns to


_records = {}  # id(NumPy buffer owner) -> _Record
_freed = []  # (home stream, read of another stream) left by buffers that died


def _buffer_died(key, ref):
    """A buffer was freed: its block goes back to its home stream's arena."""
    with _lock:
        record = _records.get(key)
        if record is None or record.owner is not ref:
            return
        del _records[key]
        if record.home is not None:
            _freed.extend((record.home, read) for read in record.reads.values() if read.stream is not record.home)
            del _freed[:-10000]  # streams of dropped devices never run again: forget their oldest entries


def _check_reuse(stream, op):
    pending = [entry for entry in _freed if entry[0] is stream]
    if not pending:
        return
    _freed[:] = [entry for entry in _freed if entry[0] is not stream]
    for _, read in pending:
        if not stream.seen(read.stream, read.tick):
            raise SimulatedRaceError(
                f"Simulated GPU race: {op} on {stream.device_name}'s stream may reuse a freed block that "
                f"{read.op} on {read.stream.device_name}'s stream may still be reading: CuPy returns a freed "
                "block to its stream's arena at once. Make the freeing stream wait for an event recorded on "
                "the reading stream after the read (as GpuDevice.copy_from does) before the block is freed."
            )


def _root(array):
    while isinstance(array.base, numpy.ndarray):
        array = array.base
    return array


def _record_of(root, create):
    key = id(root)
    record = _records.get(key)
    if record is not None and record.owner() is not root:
        record = None  # the id was reused by a new buffer
    if record is None and create:
        if len(_records) > 4096:
            for dead in [k for k, r in _records.items() if r.owner() is None]:
                del _records[dead]
        record = _records[key] = _Record(weakref.ref(root, functools.partial(_buffer_died, key)))
    return record


def _race(stream, op, earlier, what):
    raise SimulatedRaceError(
        f"Simulated GPU race: {op} on {stream.device_name}'s stream {what} a buffer that "
        f"{earlier.op} on {earlier.stream.device_name}'s stream {'wrote' if what == 'reads' else 'used'}, "
        "with no event or synchronisation between them. On a real GPU the two streams run in any order: "
        "copy the array to this device (device.asarray / copy_from, which orders the copy with events) "
        "or make this stream wait for an event recorded on the other."
    )


def access(stream, op, reads, writes, fresh=()):
    """Check and record one operation on ``stream``.

    Args:
        stream: the SimulatedStream the operation is issued to.
        op: its name, for messages.
        reads: NumPy arrays (any views) the operation reads.
        writes: NumPy arrays it writes in place (``out=``, ``a[i] = v``, ...).
        fresh: NumPy arrays it created (written by this stream).
    """
    with _lock:
        if _freed:
            _check_reuse(stream, op)
        tick = stream.tick()
        for array in reads:
            record = _record_of(_root(array), create=True)
            if record.write is not None and not stream.seen(record.write.stream, record.write.tick):
                _race(stream, op, record.write, "reads")
            record.reads[stream.id] = _Access(stream, tick, op)
        for array in writes:
            record = _record_of(_root(array), create=True)
            if record.write is not None and not stream.seen(record.write.stream, record.write.tick):
                _race(stream, op, record.write, "writes")
            for read in record.reads.values():
                if not stream.seen(read.stream, read.tick):
                    _race(stream, op, read, "writes")
            record.write = _Access(stream, tick, op)
            record.reads = {}
        for array in fresh:
            root = _root(array)
            record = _record_of(root, create=False)
            if record is None:  # a new buffer, not a view of an input
                record = _record_of(root, create=True)
                record.write = _Access(stream, tick, op)
                record.home = stream
