"""CUDA graphs: capture a sequence of GPU work once, replay it with one launch.

A small model's training step is bound by the host: some thirty kernel
launches, each ~10 us of Python and CuPy, for a few microseconds of
arithmetic. Captured into a CUDA graph, the whole step is replayed by one
``cudaGraphLaunch`` (PyTorch's ``torch.cuda.graphs``). What a graph fixes
at capture is what makes it fast and what makes it dangerous: every kernel's
arguments (pointers and scalars) are baked in, so a replay

- reads and writes exactly the buffers the capture used: inputs must be
  copied into *static* buffers before each replay, and every buffer the
  graph touches must stay allocated to it while the graph lives;
- uses the host values of the capture: a learning rate or a bias
  correction passed as a Python float is frozen (per-step scalars must be
  read from device memory, refreshed before each replay);
- cannot contain host work: a device-to-host read, a synchronisation or an
  upload from host memory inside the capture is an error.

:meth:`Device.capture` (``with device.capture() as capture: ...``, then
``capture.graph.launch()``) hides the backend:

- GPU (:func:`capture_cuda`): CuPy 14's ``Stream.begin_capture`` /
  ``end_capture`` on a non-blocking side stream ordered against the
  device's stream by events (work issued inside ``activate()`` goes to
  that side stream while capturing), allocations from a memory pool private
  to the graph (``cupy.cuda.MemoryPool``; the graph keeps it, so blocks the
  graph uses are never handed to anyone else: cupy/cupy#9655), in CuPy's
  default *relaxed* mode, because the private pool may need ``cudaMalloc``
  during capture, which the *global* mode forbids. The test suite runs this
  code on the simulated CuPy, whose capture records every call with its
  buffers and scalars, refuses what CUDA and CuPy refuse, and replays the
  recording on the same buffers (minikeras/testing/sim_cupy/cuda/graph.py);
- CPU: no graphs (``supports_graphs`` is False); ``jit_compile=True`` runs
  the eager step there, as Keras does on a backend without XLA.

Capture does not run the work (as on CUDA): the buffers written during the
capture hold what they held before it; launch the graph to run the step.
``device.stats.graph_launches`` counts launches.
"""
import contextlib
import threading

_local = threading.local()
thread_state = _local  # its ``capture``: read inline where a call per op would count (gpu.py)

CAPTURE_MODES = ("relaxed", "global", "thread_local")


class GraphCaptureError(RuntimeError):
    """Work that a CUDA graph cannot hold was issued during a capture."""


def active_capture():
    """The capture in progress on this thread, or None."""
    return getattr(_local, "capture", None)


def refuse_in_capture(device, what, why):
    """Raise GraphCaptureError if ``device`` (or any device) is capturing on
    this thread: ``what`` cannot be part of a graph, ``why`` says so."""
    capture = active_capture()
    if capture is not None:
        raise GraphCaptureError(
            f"{what} on {device.canonical if device is not None else 'a device'} during the capture of a CUDA "
            f"graph on {capture.device.canonical}: {why}"
        )


HOST_SYNC = ("the host cannot wait for the device inside a graph (CUDA refuses synchronous copies and "
             "synchronisations while a stream is capturing); keep the value on the device, or read it "
             "after the graph ran.")
UPLOAD = ("a copy from host memory would be baked into the graph with this step's values (and pageable "
          "memory cannot be captured); copy per-step inputs into static device buffers before each replay.")


def check_mode(mode):
    """Raise ValueError unless ``mode`` is one of :data:`CAPTURE_MODES`."""
    if mode not in CAPTURE_MODES:
        raise ValueError(f"capture mode must be one of {CAPTURE_MODES}, received {mode!r}.")


class Capture:
    """A capture in progress, then its result: ``graph`` (set on exit).

    Attributes:
        device: the device captured on.
        mode: the CUDA stream capture mode.
        graph: the captured graph (``graph.launch()``), once the block exited
            without error.
        keep_alive: objects the graph's kernels use that must live as long as
            it does (the counter streams of random draws,
            ``kernels/captured_random.py``); the graph holds them.
    """

    def __init__(self, device, mode):
        check_mode(mode)
        self.device = device
        self.mode = mode
        self.graph = None
        self.keep_alive = []

    @contextlib.contextmanager
    def _current(self):
        if active_capture() is not None:
            raise GraphCaptureError(f"a capture is already in progress on {active_capture().device.canonical}; "
                                    "captures do not nest.")
        _local.capture = self
        try:
            yield
        finally:
            _local.capture = None


class CudaGraph:
    """A captured CuPy graph, its private memory pool and the arrays it uses.

    Args:
        device: the GpuDevice.
        graph: the ``cupy.cuda.Graph``.
        pool: the capture's private ``cupy.cuda.MemoryPool`` (kept alive and
            never used again for anything else, so no block the graph writes
            is handed out to other work).
    """

    def __init__(self, device, graph, pool, keep_alive=()):
        self.device = device
        self._graph = graph
        self._pool = pool
        self._keep_alive = list(keep_alive)

    def launch(self):
        """Replay the graph on the device's stream (after the work queued there)."""
        device = self.device
        with device.xp.cuda.Device(device.physical.index):
            self._graph.launch(device.stream)
        device.stats.graph_launches += 1

    def release(self):
        """Drop the graph and give its private pool's unused blocks back to
        the driver (drop the arrays made during the capture first)."""
        self._graph = None
        self._keep_alive = []
        if self._pool is not None:
            with self.device.xp.cuda.Device(self.device.physical.index):
                self._pool.free_all_blocks()
        self._pool = None


@contextlib.contextmanager
def capture_cuda(device, mode="relaxed"):
    """``GpuDevice.capture``: CuPy stream capture on a side stream with a
    private pool (module docstring). Yields the :class:`Capture`."""
    from minikeras.device.gpu import _pool_allocator

    cupy = device.xp
    runtime = cupy.cuda.runtime
    modes = {"relaxed": runtime.streamCaptureModeRelaxed, "global": runtime.streamCaptureModeGlobal,
             "thread_local": runtime.streamCaptureModeThreadLocal}
    capture = Capture(device, mode)
    with cupy.cuda.Device(device.physical.index):
        pool = cupy.cuda.MemoryPool()
        side = cupy.cuda.Stream(non_blocking=True)
        side.wait_event(device.stream.record())  # the capture's reads see the device's finished work
    saved = device.stream, device._allocator
    device.stream, device._allocator = side, _pool_allocator(device, pool)
    graph = None
    try:
        with capture._current(), cupy.cuda.Device(device.physical.index), side:
            from minikeras.device import cublas_direct

            cublas_direct.prepare(cupy, side)  # CuPy refuses cuBLAS during a capture: GEMMs go direct
            side.begin_capture(modes[mode])
            try:
                yield capture
            except BaseException as error:
                try:
                    side.end_capture()  # a failed capture must still leave capture mode
                except Exception:  # noqa: BLE001  (the capture was invalidated: the body's error says why)
                    pass
                if _is_cuda_error(error):
                    raise GraphCaptureError(f"the capture of a CUDA graph on {device.canonical} failed: "
                                            f"{error}") from error
                raise
            graph = side.end_capture()
    finally:
        device.stream, device._allocator = saved
        with cupy.cuda.Device(device.physical.index):
            device.stream.wait_event(side.record())
    capture.graph = CudaGraph(device, graph, pool, capture.keep_alive)


def _is_cuda_error(error):
    """A CUDA error (CuPy's, or the library's DeviceError made of one): what
    CUDA raises for work it refuses during a capture; or CuPy's own refusal
    (``NotImplementedError``, e.g. of cuBLAS calls during a capture)."""
    from minikeras.device import cuda_errors
    from minikeras.errors import DeviceError

    return (isinstance(error, (DeviceError, NotImplementedError))
            or cuda_errors.component(error) is not None)
