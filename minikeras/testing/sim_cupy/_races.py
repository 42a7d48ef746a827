"""The simulated CUDA's race detector: vector clocks per stream, and the
last accesses of every device memory block.

Execution stays synchronous NumPy; what is simulated is *ordering*. A real
GPU runs two streams' work in any interleaving unless an event or a
synchronisation orders them, so each stream keeps a vector clock (one
counter per stream it has heard of): every operation issued to it ticks its
own counter; ``stream.record()`` snapshots the clock into an event;
``wait_event(event)`` merges the snapshot, which is the happens-before edge.

Every memory block (a pool chunk, shared by the views of an array)
remembers its last write (stream, tick, op) and, per stream, its last read.
An operation on stream S that

- reads a block whose last write was on another stream W, when S has not
  (through events) seen W's clock reach that write, or
- writes a block read or written on another stream without such an edge,

raises :class:`RaceError` naming both streams, both operations and the fix.
A block freed while another stream's access to it is not ordered before
its home stream (CuPy returns it to the arena of the stream that allocated
it, memory.pyx ``_arena``) is a race when an allocation of that stream
carves a chunk overlapping it (cuda/memory.py), unless that stream waited
for the access first.

This is the specification of ``minikeras/device/gpu.py``'s race-freedom
rules, checked on every simulated run. The legacy null stream is not
modelled: work issued to it is refused (``_calls.stream_for``).
"""
import threading

_lock = threading.RLock()


class RaceError(RuntimeError):
    """Two streams touched one memory block with nothing ordering them."""


class Access:
    __slots__ = ("stream", "tick", "op")

    def __init__(self, stream, tick, op):
        self.stream, self.tick, self.op = stream, tick, op


class Record:
    """The last write and the last read per stream of one block."""

    __slots__ = ("write", "reads")

    def __init__(self, write=None):
        self.write = write
        self.reads = {}  # stream id -> Access


def _name(stream):
    return getattr(stream, "_label", None) or repr(stream)


def _race(stream, op, earlier, what):
    raise RaceError(
        f"Simulated CUDA race: {op} on {_name(stream)} {what} a buffer that {earlier.op} on "
        f"{_name(earlier.stream)} {'wrote' if what == 'reads' else 'used'}, with no event or synchronisation "
        "between them. On a real GPU the two streams run in any order: copy the array to this device "
        "(device.asarray / copy_from, which orders the copy with events) or make this stream wait for an "
        "event recorded on the other."
    )


def seen(stream, access):
    """Whether ``stream`` has (through events) seen ``access``."""
    return access.stream is stream or stream.clock.get(access.stream.race_id, 0) >= access.tick


def access(stream, op, reads, writes, fresh=()):
    """Check and record one operation on ``stream``.

    Args:
        stream: the simulated Stream the operation is issued to.
        op: its name, for messages.
        reads: blocks the operation reads.
        writes: blocks it writes in place (``out=``, ``a[i] = v``, ...).
        fresh: blocks it allocated (written by this stream).
    """
    with _lock:
        clock = stream.clock
        tick = clock[stream.race_id] = clock[stream.race_id] + 1
        for block in reads:
            record = block._race
            if record is None:
                record = block._race = Record()
            elif record.write is not None and not seen(stream, record.write):
                _race(stream, op, record.write, "reads")
            record.reads[stream.race_id] = Access(stream, tick, op)
        if writes:
            done = Access(stream, tick, op)
            for block in writes:
                record = block._race
                if record is None:
                    block._race = Record(done)
                    continue
                if record.write is not None and not seen(stream, record.write):
                    _race(stream, op, record.write, "writes")
                for read in record.reads.values():
                    if not seen(stream, read):
                        _race(stream, op, read, "writes")
                record.write = done
                record.reads = {}
        if fresh:
            done = Access(stream, tick, op)
            for block in fresh:
                block._race = Record(done)


def foreign_accesses(record):
    """Every access in a freed block's ``record`` (the pool keeps those of
    other streams than the block's own, which a reuse must be ordered after)."""
    found = list(record.reads.values())
    if record.write is not None:
        found.append(record.write)
    return found


def check_reuse(stream, accesses, what):
    """Raise unless ``stream`` has seen every access of a freed block it is
    about to reuse (``what``: the allocation)."""
    for earlier in accesses:
        if not seen(stream, earlier):
            raise RaceError(
                f"Simulated CUDA race: {what} on {_name(stream)} reuses a freed block that {earlier.op} on "
                f"{_name(earlier.stream)} may still be using: CuPy returns a freed block to its stream's arena "
                "at once. Make the freeing stream wait for an event recorded on the other stream after its "
                "use (as GpuDevice.copy_from does) before the block is freed.")
