"""Stream capture and ``cupy.cuda.Graph`` of the simulated CUDA.

``stream.begin_capture(mode)`` / ``stream.end_capture()`` do what
``cudaStreamBeginCapture`` / ``cudaStreamEndCapture`` do, on NumPy:

- every call issued to the capturing stream is recorded as a node: the
  NumPy function, its arguments as they were (device buffers by reference,
  Python scalars by value, exactly what a kernel's parameters bake in) and
  the buffers of its result. The call also runs, so the caller's Python sees
  shapes and dtypes, but when the capture ends every buffer that existed
  before it and was written during it is put back: a capture runs nothing;
- what CUDA refuses during a capture fails with CUDA's error and
  invalidates the capture (every later call in it, and ``end_capture``,
  raise ``cudaErrorStreamCaptureInvalidated``): a synchronous copy to or
  from the host or a synchronisation of the capturing stream
  (``cudaErrorStreamCaptureUnsupported``), a wait for an event recorded
  outside the capture (``cudaErrorStreamCaptureIsolation``), and, from the
  capturing thread in ``global``/``thread_local`` mode (any thread in
  ``global``), the unsafe calls: ``cudaMalloc`` (a pool's cache miss) and
  synchronisations. CuPy refuses its cuBLAS calls itself (``_calls.py``);
- :meth:`Graph.launch` re-runs the nodes in order, writing each result into
  the buffer recorded for it, on the buffers' current contents: a step that
  baked in a host value, or reads an input from a buffer other than its
  static one, replays the capture's value. The graph holds every block it
  uses while it lives. To the race detector a launch is one operation on
  its stream reading and writing every block of the graph.
"""
import threading

import numpy

from minikeras.testing.sim_cupy import _races
from minikeras.testing.sim_cupy.cuda import runtime

_active = []  # captures in progress (any thread)
_lock = threading.Lock()


class _Capture:
    """A capture in progress on one stream."""

    def __init__(self, stream, mode):
        self.stream, self.mode, self.thread = stream, mode, threading.get_ident()
        self.error = None  # what invalidated it
        self.nodes = []
        self.reads, self.writes = {}, {}  # id(block) -> block
        self.fresh = set()  # ids of blocks allocated during the capture
        self.saved = {}  # id(block) -> (its buffer, the contents before the capture wrote it)

    def fail(self, error):
        """Invalidate the capture and raise ``error``."""
        if self.error is None:
            self.error = error
        raise error

    def check(self):
        """Raise ``cudaErrorStreamCaptureInvalidated`` once an error invalidated it."""
        if self.error is not None:
            raise runtime.CUDARuntimeError(runtime._errorStreamCaptureInvalidated)

    def will_write(self, blocks):
        """Before a call writes ``blocks``: keep what a block made before the
        capture held, to put back at its end."""
        for block in blocks:
            key = id(block)
            if key not in self.fresh and key not in self.saved and block._host is not None:
                self.saved[key] = (block._host, block._host.copy(), block)

    def record(self, function, args, kwargs, reads, writes, result, fresh):
        """One call issued during the capture (``_calls.py``, or a library double)."""
        for block in fresh:
            self.fresh.add(id(block))
        for block in reads:
            self.reads[id(block)] = block
        for block in writes:
            self.writes[id(block)] = block
        for block in fresh:
            self.writes[id(block)] = block
        self.nodes.append((function, args, kwargs, result))

    def restore(self):
        for host, before, _ in self.saved.values():
            host[...] = before
        self.saved.clear()


class Graph:
    """``cupy.cuda.Graph``: a recording of a capture, replayed by :meth:`launch`."""

    def __init__(self, capture):
        self._nodes = capture.nodes
        self._reads = list(capture.reads.values())
        self._writes = list(capture.writes.values())
        self._device_id = capture.stream.device_id

    def launch(self, stream=None):
        """Replay the recorded calls on their buffers, after the work queued on ``stream``."""
        from minikeras.testing.sim_cupy import _calls

        stream = _calls.stream_for((), "Graph.launch") if stream is None else stream
        _races.access(stream, "graph launch", self._reads, self._writes)
        for function, args, kwargs, result in self._nodes:
            _write_into(result, function(*args, **kwargs))

    def upload(self, stream=None):
        """Nothing to upload: the simulation replays on the host."""


def _write_into(recorded, value):
    if recorded is None:
        return
    if isinstance(recorded, (tuple, list)):
        for target, item in zip(recorded, value):
            _write_into(target, item)
        return
    if recorded is not value:  # a view of a buffer it already wrote, or a new array to copy in
        numpy.copyto(recorded, value, casting="unsafe")


def _begin(stream, mode):
    if mode not in (runtime.streamCaptureModeGlobal, runtime.streamCaptureModeThreadLocal,
                    runtime.streamCaptureModeRelaxed):
        raise runtime.CUDARuntimeError(1)
    if stream.capture is not None:
        raise runtime.CUDARuntimeError(runtime._errorIllegalState)
    capture = _Capture(stream, mode)
    with _lock:
        _active.append(capture)
    stream.capture = capture


def _end(stream):
    capture = stream.capture
    if capture is None:
        raise runtime.CUDARuntimeError(runtime._errorIllegalState)
    stream.capture = None
    with _lock:
        _active.remove(capture)
    capture.restore()
    capture.check()
    return Graph(capture)


def _strict_captures():
    """Captures that forbid unsafe calls from this thread."""
    me = threading.get_ident()
    return [capture for capture in _active
            if capture.mode == runtime.streamCaptureModeGlobal
            or (capture.mode == runtime.streamCaptureModeThreadLocal and capture.thread == me)]


def _refuse_unsafe_call(what):
    """Raise ``cudaErrorStreamCaptureUnsupported`` (invalidating the
    capture) when a capture forbids the unsafe call ``what`` here."""
    if _active:
        for capture in _strict_captures():
            capture.fail(runtime.CUDARuntimeError(runtime._errorStreamCaptureUnsupported))


def _refuse_host_wait(stream, what):
    """A synchronous copy or a synchronisation on ``stream``: refused while
    it captures, or while a capture forbids unsafe calls."""
    if stream.capture is not None:
        stream.capture.fail(runtime.CUDARuntimeError(runtime._errorStreamCaptureUnsupported))
    _refuse_unsafe_call(what)
