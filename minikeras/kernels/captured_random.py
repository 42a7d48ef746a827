"""Random draws of a captured training step: each generator's counter stream.

Eager steps draw from the device's generators (NumPy's on the CPU and the
simulated GPU, cuRAND's through CuPy on a GPU), unchanged. While a step is
captured into a CUDA graph (``device/graph.py``) those draws would be
frozen into the graph, so :func:`draw` (what Dropout, SpatialDropout,
GaussianNoise, GaussianDropout and AlphaDropout call) takes the same
distribution from the generator's *counter stream* instead: the
``counter_random`` kernel (``kernels/counter_random.py``) with a key derived
from what the generator was seeded with, and an offset in device memory that
the kernel advances. Every replay of the graph reads the offset the previous
replay left, so masks differ from step to step, and a fixed seed gives the
same masks from run to run (the stream's offset starts at 0).

The offsets live in one small table per device (``SLOTS`` rows of two
``uint64`` words: offset and the kernel's block ticket), allocated by
:func:`prepare` *before* a capture: an array made during the capture would
belong to that graph's private pool, and its zero-fill would be replayed.
A generator's stream takes a free row the first time it draws in a capture;
the stream lives while its generator or any graph captured with it lives
(``Capture.keep_alive``), and its row is zeroed and reused after that.
Draws this module does not cover (other methods, a generator of another
device or of the host) still reach the generator, which refuses them during
a capture, so the step runs eagerly with a warning (``models/captured_step.py``).
"""
import threading
import weakref

import numpy

from minikeras.device import graph
from minikeras.kernels.kernel import get, registered

SLOTS = 256  # counter streams per device at once
_METHODS = {"random": False, "standard_normal": True}  # generator method -> the kernel's ``normal`` flag
_KEY_SALT = 0x636F756E  # spawns the key's stream from the generator's entropy, apart from its own states

_tables = weakref.WeakKeyDictionary()  # device -> _Table
_streams = weakref.WeakKeyDictionary()  # generator -> CounterStream
_lock = threading.Lock()


def draw(generator, device, method, shape, dtype):
    """``generator.<method>(shape, dtype=dtype)``, or, while ``device``
    captures a graph, the same distribution from the generator's counter
    stream (module docstring).

    Args:
        generator: the device's generator (``device.new_rng``, or
            ``minikeras.random.generator``), or one a caller passed.
        device: where the numbers are wanted.
        method: ``"random"`` (uniform in ``[0, 1)``) or ``"standard_normal"``.
        shape: the shape of the result.
        dtype: float32 or float64.

    Returns:
        An array of ``shape`` and ``dtype`` (the generator's own for anything
        not covered, e.g. a host generator).
    """
    capture = graph.active_capture()
    if (capture is None or capture.device is not device or method not in _METHODS
            or not _draws_on(generator, device)):
        return getattr(generator, method)(shape, dtype=dtype)
    stream = _stream(generator, device)
    if not any(kept is stream for kept in capture.keep_alive):
        capture.keep_alive.append(stream)  # the graph replays on its row: the row stays its own
    with device.activate():
        return get("counter_random", device)(tuple(int(size) for size in shape), numpy.dtype(dtype), stream.key,
                                             stream.state, _METHODS[method])


def prepare(device):
    """Make ``device``'s table of stream offsets, or zero the rows freed
    since the last capture; on a GPU that compiles kernels, compile the
    counter kernel now. Called before every capture (the capture can
    neither allocate the table nor compile without baking that into the graph)."""
    graph.refuse_in_capture(device, "preparing the random streams", "their table must exist before a capture.")
    with _lock:
        table = _tables.get(device)
        if table is None:
            table = _tables[device] = _Table(device)
        table.reuse_released()
    if device.compiles_kernels:
        kernel = registered()["counter_random"]
        with device.activate():
            for dtype in kernel.dtypes:
                kernel.compiled(device, dtype)


def stream_of(generator):
    """The counter stream of ``generator``, or None before it drew in a capture."""
    return _streams.get(generator)


class CounterStream:
    """A generator's counter-based stream on its device.

    Attributes:
        key: the 64-bit key (from the generator's seed; random when it had none).
        state: the device row ``[offset, ticket]`` (``uint64``) the kernel reads
            and advances.
        offset: ``state[0]`` as a 0-d ``uint64`` device array (a view).
        slot: the row of the device's table.
    """

    def __init__(self, table, slot, key):
        self.key = key
        self.slot = slot
        with table.device.activate():
            self.state = table.state[slot]
            self.offset = self.state[:1].reshape(())  # a 0-d view: what the kernel reads and advances
        weakref.finalize(self, table.release, slot)


class _Table:
    """One device's stream rows, and which are free."""

    def __init__(self, device):
        self.device = device
        with device.activate():
            self.state = device.xp.zeros((SLOTS, 2), numpy.uint64)
        self.free = list(range(SLOTS - 1, -1, -1))
        self.released = []

    def take(self):
        if not self.free:
            raise graph.GraphCaptureError(
                f"more than {SLOTS} random generators drew in captured steps on {self.device.canonical} and are "
                "still alive; their counter streams are all in use.")
        return self.free.pop()

    def release(self, slot):
        self.released.append(slot)  # zeroed by the next prepare, outside any capture

    def reuse_released(self):
        if self.released:
            with self.device.activate():
                for slot in self.released:
                    self.state[slot] = 0
            self.free.extend(self.released)
            self.released.clear()


def _draws_on(generator, device):
    return getattr(type(generator), "device", None) is not None and generator.device is device


def _stream(generator, device):
    with _lock:
        stream = _streams.get(generator)
        if stream is None:
            table = _tables.get(device)
            if table is None:
                raise graph.GraphCaptureError(
                    f"a random draw during the capture of a graph on {device.canonical}, whose counter streams "
                    "were not prepared (kernels.captured_random.prepare(device) before the capture).")
            stream = _streams[generator] = CounterStream(table, table.take(), _key(generator.entropy))
        return stream


def _key(entropy):
    """A 64-bit key from the generator's seed (fresh entropy when it had none)."""
    seed = numpy.random.SeedSequence(entropy)
    child = numpy.random.SeedSequence(seed.entropy, spawn_key=(*seed.spawn_key, _KEY_SALT))
    return int(child.generate_state(1, numpy.uint64)[0])
