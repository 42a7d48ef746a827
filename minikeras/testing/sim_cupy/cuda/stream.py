"""``cupy.cuda.Stream`` and ``cupy.cuda.Event`` of the simulated CUDA, and
the current stream of each host thread (cupy/cuda/stream.pyx, v14.2.0).

As in CuPy, ``with stream:`` makes a stream current for its device in this
thread (refused when another device is current), ``get_current_stream()``
returns it, and the legacy null stream (``Stream.null``) is current where
none was entered. Each stream carries the race detector's vector clock
(``_races.py``): ``record()`` snapshots it into an event, ``wait_event()``
merges one. ``begin_capture``/``end_capture`` capture what is issued to the
stream into a :class:`~minikeras.testing.sim_cupy.cuda.graph.Graph`.
"""
import itertools
import threading
import weakref

from minikeras.testing.sim_cupy import _races
from minikeras.testing.sim_cupy.cuda import pinned_memory, runtime

_handles = itertools.count(0x5000, 0x10)
_race_ids = itertools.count(1)
_local = threading.local()
_by_pointer = weakref.WeakValueDictionary()  # stream handle -> Stream (for the library doubles, libs/)


def _from_pointer(ptr):
    """The stream whose handle is ``ptr`` (0: the legacy null stream), or None."""
    return Stream.null if ptr == 0 else _by_pointer.get(ptr)


def _stacks():
    """This thread's ``{device id: [streams entered]}`` and the order they were entered in."""
    try:
        return _local.stacks, _local.order
    except AttributeError:
        _local.stacks, _local.order = {}, []
        return _local.stacks, _local.order


def _current():
    """The current stream of the current device in this thread."""
    stacks, _ = _stacks()
    stack = stacks.get(runtime.getDevice())
    return stack[-1] if stack else Stream.null


def _host_waits(clock):
    pinned_memory._host_waits(clock)


def get_current_stream(device_id=-1):
    """The current stream of ``device_id`` (the current device by default)."""
    stacks, _ = _stacks()
    stack = stacks.get(runtime.getDevice() if device_id == -1 else device_id)
    return stack[-1] if stack else Stream.null


class Event:
    """``cupy.cuda.Event``: a snapshot of a stream's clock."""

    def __init__(self, block=False, disable_timing=False, interprocess=False):
        if interprocess and not disable_timing:
            raise ValueError("Timing must be disabled for interprocess events")
        self.ptr = next(_handles)
        self.clock = {}
        self.capture = None  # the capture it was recorded in, if any

    @property
    def done(self):
        """True: the simulation has run the work (the host now knows it done)."""
        _host_waits(self.clock)
        return True

    def record(self, stream=None):
        (_current() if stream is None else stream).record(self)

    def synchronize(self):
        """The host waits for the event: its clock is the host's
        (cuda/pinned_memory.py: the copies it covers are done)."""
        _host_waits(self.clock)


class _BaseStream:
    """What every simulated stream has: ``ptr``, ``device_id``, the clock."""

    def __init__(self, ptr, device_id):
        self.ptr = ptr
        self.device_id = device_id
        self.race_id = next(_race_ids)
        self.clock = {self.race_id: 0}
        self.capture = None  # the capture in progress on this stream (cuda/graph.py)
        self.owner = None  # weak reference to the library's logical device using it (_counting.py)
        if ptr not in (0, runtime.streamLegacy, runtime.streamPerThread):
            _by_pointer[ptr] = self

    def __eq__(self, other):
        return isinstance(other, _BaseStream) and self.ptr == other.ptr

    def __hash__(self):
        return self.ptr

    def __repr__(self):
        return f"<{type(self).__name__} {self.ptr} (device {self.device_id})>"

    @property
    def _label(self):
        """For messages: the logical device whose stream it is, if any."""
        from minikeras.testing.sim_cupy import _counting

        device = _counting.device_of(self)
        if device is None:
            return repr(self)
        return f"{device.canonical}'s {'capture ' if self.capture is not None else ''}stream"

    def __enter__(self):
        device_id = self.device_id
        current_device = runtime.getDevice()
        if device_id == -1:
            device_id = current_device
        if device_id != current_device:
            raise RuntimeError(f"The device that the stream is created on ({device_id}) does not match with the "
                               f"current device ({current_device})")
        stacks, order = _stacks()
        stacks.setdefault(device_id, []).append(self)
        order.append(device_id)
        return self

    def __exit__(self, *exc):
        stacks, order = _stacks()
        stacks[order.pop()].pop()
        return False

    def use(self):
        device_id = runtime.getDevice() if self.device_id == -1 else self.device_id
        stacks, _ = _stacks()
        stack = stacks.setdefault(device_id, [])
        if stack:
            stack[-1] = self
        else:
            stack.append(self)
        return self

    @property
    def done(self):
        _host_waits(self.clock)
        return True

    def synchronize(self):
        """The host waits for the stream: refused while it captures (CUDA)."""
        from minikeras.testing.sim_cupy.cuda import graph

        graph._refuse_host_wait(self, "cudaStreamSynchronize")
        _host_waits(self.clock)

    def record(self, event=None):
        """An event holding this stream's clock (all work issued so far)."""
        if event is None:
            event = Event()
        with _races._lock:
            event.clock = dict(self.clock)
        event.capture = self.capture
        return event

    def wait_event(self, event):
        """Later work on this stream waits for ``event`` (happens-before).
        A capturing stream may wait only for work of its own capture."""
        if self.capture is not None and event.capture is not self.capture:
            self.capture.fail(runtime.CUDARuntimeError(runtime._errorStreamCaptureIsolation))
        with _races._lock:
            clock = self.clock
            for stream_id, tick in event.clock.items():
                if clock.get(stream_id, 0) < tick:
                    clock[stream_id] = tick

    def begin_capture(self, mode=None):
        from minikeras.testing.sim_cupy.cuda import graph

        if self.ptr in (0, 1):
            raise RuntimeError("cannot capture on the default (legacy) stream")
        graph._begin(self, runtime.streamCaptureModeRelaxed if mode is None else mode)

    def end_capture(self):
        from minikeras.testing.sim_cupy.cuda import graph

        return graph._end(self)

    def is_capturing(self):
        return self.capture is not None

    @property
    def is_non_blocking(self):
        return self._non_blocking

    @property
    def priority(self):
        return self._priority


class Stream(_BaseStream):
    """``cupy.cuda.Stream(null=False, non_blocking=False, ptds=False, priority=None)``."""

    null = None
    ptds = None

    def __init__(self, null=False, non_blocking=False, ptds=False, priority=None):
        if null:
            ptr, device_id = 0, -1
        elif ptds:
            ptr, device_id = runtime.streamPerThread, -1
        else:
            ptr, device_id = next(_handles), runtime.getDevice()
        super().__init__(ptr, device_id)
        self._non_blocking = bool(non_blocking) and not null
        self._priority = 0 if priority is None else int(priority)


Stream.null = Stream(null=True)
Stream.ptds = Stream(ptds=True)
