"""The strict simulated GPU's model of CUDA graph capture and replay.

A capture on the simulated GPU (``SimulatedGpuDevice.capture``) does what
``cudaStreamBeginCapture`` / ``cudaGraphLaunch`` do, on NumPy:

- every array-module call issued to the capturing device is recorded as a
  node: the NumPy function, its arguments as they were (device buffers by
  reference, Python scalars by value, exactly what a kernel's parameters
  bake in) and the buffers of its result. The call also runs, so the step's
  Python sees shapes and dtypes, but when the capture ends every buffer that
  existed before it and was written during it is put back: as on CUDA, a
  capture runs nothing;
- what CUDA refuses raises :class:`~minikeras.device.graph.GraphCaptureError`:
  a host read or synchronisation, an upload from host memory, work issued
  to another device's stream, a draw from a generator (the host-side
  generator of the simulation would be frozen into the graph; random layers
  draw from counter streams instead, ``kernels/captured_random.py``, whose
  recorded kernel reads and advances its device offset at every replay), and in ``"global"`` mode any
  new allocation (``cudaMalloc`` is an unsafe call there; the simulation has
  no pool cache that could serve it, so it refuses every one);
- :meth:`SimulatedGraph.launch` re-runs the nodes in order, writing each
  result into the buffer recorded for it, on the device's current buffer
  contents: a step that baked in a host value, or that reads an input from a
  buffer other than its static one, replays the capture's value, which a
  comparison with eager training catches. The graph holds every buffer it
  uses for as long as it lives (the private pool of a real capture), and a
  launch allocates nothing the device counts. To the race detector a launch
  is one operation on the device's stream reading and writing every buffer
  of the graph.
"""
import numpy

from minikeras.device import graph, simulated_streams
from minikeras.device.simulated_array import _fresh_arrays as _arrays_of
from minikeras.device.simulated_array import _root


class SimulatedGraph:
    """A recording of a capture, replayed by :meth:`launch`."""

    def __init__(self, device, nodes, reads, writes, keep_alive=()):
        self.device = device
        self._nodes = nodes
        self._reads = reads
        self._writes = writes
        self._keep_alive = list(keep_alive)  # Capture.keep_alive

    @property
    def node_count(self):
        """Kernels (array calls) in the graph."""
        return len(self._nodes)

    def launch(self):
        """Replay the recorded calls on the same buffers (the device's stream)."""
        device = self.device
        with device.activate():
            simulated_streams.access(device.stream, "graph launch", self._reads, self._writes)
            for function, args, kwargs, result in self._nodes:
                _write_into(result, function(*args, **kwargs))
        device.stats.graph_launches += 1

    def release(self):
        """Drop the recording (and with it the buffers it held)."""
        self._nodes = self._reads = self._writes = self._keep_alive = ()


def _write_into(recorded, value):
    if recorded is None:
        return
    if isinstance(recorded, (tuple, list)):
        for target, item in zip(recorded, value):
            _write_into(target, item)
        return
    if recorded is not value:  # a view of a buffer it already wrote, or a new array to copy in
        numpy.copyto(recorded, value, casting="unsafe")


class SimulatedCapture(graph.Capture):
    """A capture in progress on a simulated GPU (module docstring)."""

    def __init__(self, device, mode):
        super().__init__(device, mode)
        self._nodes = []
        self._reads, self._writes = {}, {}
        self._fresh = set()  # ids of buffers made during the capture
        self._saved = {}  # id(buffer) -> (buffer, its contents before the capture wrote it)

    def will_write(self, writes):
        """Before a call writes ``writes``: keep what a buffer made before the
        capture held, to put back at its end."""
        for array in writes:
            root = _root(array)
            key = id(root)
            if key not in self._fresh and key not in self._saved:
                self._saved[key] = (root, root.copy())

    def record(self, function, args, kwargs, reads, writes, result):
        """One call issued during the capture (from ``simulated_array._call``)."""
        made = []
        _arrays_of(result, made)
        for array in made:
            root = _root(array)
            if not any(root is _root(other) for other in reads + writes):
                if self.mode == "global":
                    raise graph.GraphCaptureError(
                        f"an allocation on {self.device.canonical} during a capture in 'global' mode: cudaMalloc "
                        "is an unsafe call while any stream captures in global mode; capture in 'relaxed' mode "
                        "(the graph's private pool may grow) or allocate before the capture.")
                self._fresh.add(id(root))
        for array in reads:
            self._reads[id(array)] = array
        for array in writes + made:
            self._writes[id(array)] = array
        self._nodes.append((function, args, kwargs, result))

    def finish(self):
        """End the capture: put back what it wrote and return the graph."""
        for root, before in self._saved.values():
            root[...] = before
        self._saved.clear()
        return SimulatedGraph(self.device, self._nodes, list(self._reads.values()), list(self._writes.values()),
                              self.keep_alive)


def capture_simulated(device, mode="relaxed"):
    """``SimulatedGpuDevice.capture``: a context that records the device's
    work and sets ``capture.graph`` on a clean exit."""
    return _CaptureContext(device, mode)


class _CaptureContext:
    def __init__(self, device, mode):
        self.capture = SimulatedCapture(device, mode)
        self._scope = None

    def __enter__(self):
        device = self.capture.device
        # As on CUDA: a side stream, ordered after the device's stream's work.
        self._side = simulated_streams.SimulatedStream(f"{device.canonical} (capture)")
        self._side.wait_event(device.stream.record())
        self._saved_stream, device.stream = device.stream, self._side
        self._scope = self.capture._current()
        self._scope.__enter__()
        return self.capture

    def __exit__(self, kind, error, traceback):
        device = self.capture.device
        self._scope.__exit__(kind, error, traceback)
        device.stream = self._saved_stream
        device.stream.wait_event(self._side.record())
        recorded = self.capture.finish()
        if kind is None:
            self.capture.graph = recorded
        return False
