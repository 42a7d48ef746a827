"""LocalAllReduce: sums across replicas in one process, by host or
device-to-device copies.

Every replica deposits its arrays and waits at a barrier; then each replica
reduces its share of the entries (a reduce-scatter, balanced by bytes, so
the additions of large gradients run in parallel: NumPy releases the GIL
in them), always adding the contributions in rank order; after a second
barrier every replica takes all the sums (an all-gather). Each entry is
summed exactly once, so every replica receives the same bits.

On CPU devices the sums are shared, not copied (all logical CPUs share the
host's memory). On GPUs the owner sums on its own device and stream; the
others copy the result to their device and wait for the copy, because a
block freed back to CuPy's pool may be reused at once by its stream.
"""
import threading


from minikeras import backend
from minikeras.device import registry
from minikeras.distribute.all_reduce import AllReduce, ReplicaAborted


class _Call:
    """The shared state of one collective call."""

    __slots__ = ("results", "work", "summed", "readers")

    def __init__(self, count, work, readers):
        self.results = [None] * count
        self.work = work
        self.summed = False
        self.readers = readers


class LocalAllReduce(AllReduce):
    """All-reduce by copies between the logical devices of this process.

    Works for any mix of CPU and GPU devices (see the module docstring).

    Args:
        devices: the replicas' logical devices, rank = position.

    Attributes:
        serial_bytes: on CPUs, calls carrying at most this many bytes per
            replica are summed by one thread right at the first barrier
            (saving the second barrier); larger ones are reduce-scattered.
    """

    serial_bytes = 8 * 2**20

    def __init__(self, devices):
        super().__init__(devices)
        self._slots = [None] * self.size
        self._current = None
        self._plans = {}  # entry sizes -> the entries each rank reduces
        self._deposited = threading.Barrier(self.size, action=self._prepare)
        self._reduced = threading.Barrier(self.size, action=self._finish)
        self._delivered = threading.Barrier(self.size)
        self._host_only = all(device.host_kernels for device in self.devices)
        self._lock = threading.Lock()

    def all_reduce(self, rank, arrays, tag=None):
        """See :meth:`AllReduce.all_reduce`."""
        arrays = list(arrays)
        if self.size == 1:
            return arrays
        device = self.devices[rank]
        device.synchronize()  # other replicas read these arrays from their streams (no-op on the CPU)
        self._slots[rank] = arrays
        self._wait(self._deposited)
        call = self._current
        if call.summed:
            self._slots[rank] = None
            with self._lock:
                call.readers -= 1
                if call.readers == 0 and self._current is call:
                    self._current = None  # the sums live only as long as the replicas keep them
            return list(call.results)
        owned = call.work[rank]
        for index in owned:
            call.results[index] = self._sum(index, device)
        device.synchronize()
        self._wait(self._reduced)
        self._slots[rank] = None  # everyone has read it: release the inputs
        if self._host_only:
            return list(call.results)
        owned = set(owned)
        results = [value if index in owned else _deliver(value, device) for index, value in enumerate(call.results)]
        device.synchronize()
        # No owner may release (and its stream reuse) a block before every
        # replica has finished copying from it.
        self._wait(self._delivered)
        return results

    def _wait(self, barrier):
        try:
            barrier.wait()
        except threading.BrokenBarrierError:
            raise ReplicaAborted("another replica failed during this step; the step was abandoned") from None

    def _prepare(self):
        """Runs once all replicas deposited: check and plan the reduction."""
        counts = {len(slot) for slot in self._slots}
        if len(counts) != 1:
            raise ValueError(f"all_reduce: the replicas passed different numbers of arrays: {sorted(counts)}.")
        (count,) = counts
        sizes = tuple(
            max((getattr(slot[index], "nbytes", 0) for slot in self._slots if slot[index] is not None), default=0)
            for index in range(count)
        )
        work = self._plans.get(sizes)
        if work is None:
            work = self._plans[sizes] = _balance(sizes, self.size)
        call = self._current = _Call(count, work, self.size)
        if self._host_only and sum(sizes) <= self.serial_bytes:
            # Small enough to add here at once: one barrier per call instead
            # of two (on a busy machine every barrier costs a wake-up).
            for rank, indices in enumerate(work):
                for index in indices:
                    call.results[index] = self._sum(index, self.devices[rank])
            call.summed = True

    def _finish(self):
        self._current = None  # every replica holds the call by now

    def _sum(self, index, owner):
        pieces = [slot[index] for slot in self._slots if slot[index] is not None]
        if not pieces:
            return None
        if not backend.is_array(pieces[0]):
            total = pieces[0]
            for piece in pieces[1:]:
                total = total + piece
            return total
        with owner.activate():
            # Host pieces and other physical GPUs' pieces are copied here;
            # a piece already readable by this device is used in place.
            pieces = [owner.asarray(piece) for piece in pieces]
            total = _add_in_order(owner.xp, pieces)
        owner.memory.track(total)
        return total

    def abort(self):
        """See :meth:`AllReduce.abort`."""
        for barrier in (self._deposited, self._reduced, self._delivered):
            barrier.abort()

    def reset(self):
        """See :meth:`AllReduce.reset`."""
        for barrier in (self._deposited, self._reduced, self._delivered):
            barrier.reset()
        self._slots = [None] * self.size
        self._current = None


def _add_in_order(xp, pieces):
    """``pieces[0] + pieces[1] + ...`` into a new array, in that order."""
    if len(pieces) == 1:
        return pieces[0].copy()
    total = xp.add(pieces[0], pieces[1])
    for piece in pieces[2:]:
        total += piece
    return total


def _balance(sizes, parties):
    """Assign entries to ranks, largest first to the least loaded rank."""
    work = [[] for _ in range(parties)]
    load = [0] * parties
    for index in sorted(range(len(sizes)), key=lambda i: -sizes[i]):
        rank = load.index(min(load))
        work[rank].append(index)
        load[rank] += max(sizes[index], 1)
    return work


def _deliver(value, device):
    """A sum as the replica on ``device`` receives it."""
    if value is None or not backend.is_array(value):
        return value
    # A copy on this replica's stream even on the same physical GPU: the
    # owner's block returns to its pool (and stream) when released.
    return device.copy_from(value, registry.owner_of(value))
