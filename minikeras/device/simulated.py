"""The strict simulated GPU: a test-only device that behaves like CuPy.

Enabled only by the test suite: ``MINIKERAS_SIMULATED_GPU=N`` in the
environment (N physical GPUs, default 1 for any value other than a number)
makes the device registry, at first use, list N simulated physical GPUs
and build logical GPUs on them (logical splits work too), ``gpu:0``
becoming the default device. Users never see it: nothing public names it.

Arrays are :class:`~minikeras.device.simulated_array.SimulatedArray`:
NumPy underneath, CuPy's strictness on top (no implicit host conversion,
CuPy's flags and attributes only, host reads counted, work outside
``activate()`` refused). Memory is counted per buffer like the CPU's,
against the logical device's limit, and going past it raises
ResourceExhaustedError as the GPU pool does.
"""
import os

import numpy

from minikeras.device import graph, scatter, simulated_array, simulated_graph, simulated_streams
from minikeras.device.device import Device
from minikeras.device.memory import MemoryStats

ENVIRONMENT_VARIABLE = "MINIKERAS_SIMULATED_GPU"
MEMORY_BYTES = 4 * 2**30  # what each simulated physical GPU reports


def _requested():
    """``(physical GPUs, logical GPUs per physical GPU)`` from the
    environment: ``"2"`` is two physical GPUs, ``"1x2"`` one physical GPU
    split into two logical GPUs (each with half its memory, as if
    ``set_logical_device_configuration`` had been called), which is how CI
    runs the race detector with two streams on one GPU."""
    value = os.environ.get(ENVIRONMENT_VARIABLE, "").strip().lower()
    if value in ("", "0"):
        return 0, 1
    count, _, split = value.partition("x")
    try:
        return max(1, int(count)), max(1, int(split or 1))
    except ValueError:
        return 1, 1


def requested_count():
    """Simulated physical GPUs asked for by the environment (0: none)."""
    return _requested()[0]


def default_logical_limits():
    """Memory limits (bytes) of the logical GPUs each simulated physical GPU
    is split into when the test run asks for a split (``"1x2"``), or None."""
    split = _requested()[1] if requested_count() else 1
    return None if split < 2 else [MEMORY_BYTES // split] * split


POOL_GRANULARITY = 512  # CuPy's MemoryPool rounds every allocation up to this


class SimulatedMemoryStats(MemoryStats):
    """Per-buffer accounting of simulated GPU arrays (of their NumPy data),
    each rounded up to CuPy's pool granularity (memory.pyx ``_round_size``:
    512 bytes), as a real GPU's ``used_bytes`` counts it."""

    def allocation_size(self, nbytes):
        return -(-nbytes // POOL_GRANULARITY) * POOL_GRANULARITY

    def track(self, array):
        inner = getattr(array, "_array", None)
        if inner is not None:
            super().track(inner)


class _Context:
    """``activate()`` of a simulated GPU (re-entrant, thread-local)."""

    __slots__ = ("device",)

    def __init__(self, device):
        self.device = device

    def __enter__(self):
        simulated_array.push(self.device)
        return self.device

    def __exit__(self, *exc):
        simulated_array.pop()
        return False


class SimulatedGpuDevice(Device):
    """A logical GPU simulated on the host (tests only; module docstring)."""

    kind = "gpu"

    def __init__(self, index, physical, memory):
        super().__init__(index, physical, memory)
        self.xp = simulated_array.simulated_xp()
        self.stream = simulated_streams.SimulatedStream(self.canonical)
        self._context = _Context(self)

    def activate(self):
        return self._context

    def one_kernel(self):
        return simulated_array.one_launch(self)

    supports_graphs = True

    def capture(self, mode="relaxed"):
        """Record the work issued in this block as a graph (``device/simulated_graph.py``)."""
        return simulated_graph.capture_simulated(self, mode)

    def convolutions(self):
        from minikeras.device import cudnn, simulated_cudnn

        return simulated_cudnn.SimulatedConvolutions() if cudnn.enabled() else None

    def matmul(self, a, b):
        with simulated_array.direct_cublas():  # as GpuDevice: cuBLAS called directly while capturing
            return super().matmul(a, b)

    def gemm(self, a, b, out=None):
        with simulated_array.direct_cublas():
            return super().gemm(a, b, out)

    def synchronize(self):
        graph.refuse_in_capture(self, "synchronize()", graph.HOST_SYNC)
        self.stats.host_syncs += 1
        self.stream.synchronize()

    def is_array(self, value):
        return type(value) is simulated_array.SimulatedArray

    def owns(self, array):
        return type(array) is simulated_array.SimulatedArray and array._device is self

    def asarray(self, value, dtype=None):
        with self._context:
            if type(value) is simulated_array.SimulatedArray:
                # Another logical GPU's array, even on this physical GPU, is
                # copied: reading it in place would read it on this stream,
                # unordered with the stream that made it (gpu.py, rule 4).
                array = value if value._device is self else self.copy_from(value, value._device)
            else:
                from minikeras.device import registry

                if not isinstance(value, numpy.ndarray) and registry.is_device_array(value):
                    value = registry.owner_of(value).to_host(value)
                graph.refuse_in_capture(self, "an upload from the host", graph.UPLOAD)
                self.stats.uploads += 1
                array = simulated_array.SimulatedArray(numpy.array(value, copy=True), self)
                simulated_array._issue("upload", (), (), array._array)
            if dtype is not None and array.dtype != dtype:
                array = array.astype(dtype)
        return array

    def copy_from(self, array, source):
        """A copy on this device of ``array``, which lives on ``source``."""
        graph.refuse_in_capture(self, f"a copy from {source.canonical if source else 'the host'}",
                                "work of another stream or the host is not part of the captured stream.")
        if type(array) is not simulated_array.SimulatedArray:
            host = source.to_host(array)
            with self._context:
                self.stats.uploads += 1
                copied = simulated_array.SimulatedArray(numpy.array(host, copy=True), self)
                simulated_array._issue("upload", (), (), copied._array)
                return copied
        # As GpuDevice.copy_from: the copy runs on this device's stream after
        # an event of the source's stream, and the source waits for the copy
        # before it may write or free the block again.
        self.stats.device_copies += 1
        self.stream.wait_event(source.stream.record())
        with self._context:
            data = array._array.copy()
            simulated_array._issue(f"copy from {source.canonical}", (array._array,), (), data)
        source.stream.wait_event(self.stream.record())
        return simulated_array.SimulatedArray(data, self)

    def to_host(self, array):
        if isinstance(array, numpy.ndarray):
            return array
        with self._context:
            return array.get()

    def scatter_add(self, target, indices, values):
        scatter.scatter_add(self.xp, target, indices, values)

    def scatter_reduce(self, op, target, indices, values):
        scatter.scatter_reduce(self.xp, op, target, indices, values)

    def new_rng(self, entropy):
        return _SimulatedGenerator(self, numpy.random.default_rng(entropy), entropy)


class _SimulatedGenerator:
    """A ``cupy.random.Generator`` stand-in: only the methods CuPy has."""

    _METHODS = frozenset(
        "beta binomial chisquare dirichlet exponential f gamma geometric hypergeometric integers logseries "
        "poisson power random standard_exponential standard_gamma standard_normal uniform".split()
    )

    def __init__(self, device, rng, entropy=None):
        self._device = device
        self._rng = rng
        self.entropy = entropy  # what it was seeded from: the key of its stream in a captured step

    @property
    def device(self):
        """The device it draws on (kernels/captured_random.py)."""
        return self._device

    def __getattr__(self, name):
        if name not in self._METHODS:
            raise AttributeError(f"'cupy.random.Generator' (simulated) object has no attribute {name!r}")
        method = getattr(self._rng, name)
        device = self._device

        def draw(*args, **kwargs):
            simulated_array._require(device, f"Generator.{name}")
            graph.refuse_in_capture(device, f"Generator.{name}", "random layers draw from generators "
                                    "that are not captured (a graph would replay this step's random numbers).")
            result = method(*args, **kwargs)
            simulated_array._issue(f"Generator.{name}", (), (), result)
            simulated_array.count_kernel(device)  # a draw is one kernel, as cuRAND's
            return simulated_array._wrap(result, device)

        return draw
