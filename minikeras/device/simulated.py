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

from minikeras.device import simulated_array
from minikeras.device.device import Device
from minikeras.device.memory import MemoryStats

ENVIRONMENT_VARIABLE = "MINIKERAS_SIMULATED_GPU"
MEMORY_BYTES = 4 * 2**30  # what each simulated physical GPU reports


def requested_count():
    """Simulated physical GPUs asked for by the environment (0: none)."""
    value = os.environ.get(ENVIRONMENT_VARIABLE, "").strip()
    if value in ("", "0"):
        return 0
    try:
        return max(1, int(value))
    except ValueError:
        return 1


class SimulatedMemoryStats(MemoryStats):
    """Per-buffer accounting of simulated GPU arrays (of their NumPy data)."""

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
        self._context = _Context(self)

    def activate(self):
        return self._context

    def one_kernel(self):
        return simulated_array.one_launch(self)

    def synchronize(self):
        self.stats.host_syncs += 1

    def is_array(self, value):
        return type(value) is simulated_array.SimulatedArray

    def owns(self, array):
        return type(array) is simulated_array.SimulatedArray and array._device is self

    def asarray(self, value, dtype=None):
        with self._context:
            if type(value) is simulated_array.SimulatedArray:
                if value._device is self or value._device.physical is self.physical:
                    array = value
                else:
                    array = self.copy_from(value, value._device)
            else:
                from minikeras.device import registry

                if not isinstance(value, numpy.ndarray) and registry.is_device_array(value):
                    value = registry.owner_of(value).to_host(value)
                self.stats.uploads += 1
                array = simulated_array.SimulatedArray(numpy.array(value, copy=True), self)
            if dtype is not None and array.dtype != dtype:
                array = array.astype(dtype)
        return array

    def copy_from(self, array, source):
        """A copy on this device of ``array``, which lives on ``source``."""
        if type(array) is not simulated_array.SimulatedArray:
            host = source.to_host(array)
            with self._context:
                self.stats.uploads += 1
                return simulated_array.SimulatedArray(numpy.array(host, copy=True), self)
        self.stats.device_copies += 1
        with source.activate():
            data = array._array.copy()
        return simulated_array.SimulatedArray(data, self)

    def to_host(self, array):
        if isinstance(array, numpy.ndarray):
            return array
        with self._context:
            return array.get()

    def new_rng(self, entropy):
        return _SimulatedGenerator(self, numpy.random.default_rng(entropy))


class _SimulatedGenerator:
    """A ``cupy.random.Generator`` stand-in: only the methods CuPy has."""

    _METHODS = frozenset(
        "beta binomial chisquare dirichlet exponential f gamma geometric hypergeometric integers logseries "
        "poisson power random standard_exponential standard_gamma standard_normal uniform".split()
    )

    def __init__(self, device, rng):
        self._device = device
        self._rng = rng

    def __getattr__(self, name):
        if name not in self._METHODS:
            raise AttributeError(f"'cupy.random.Generator' (simulated) object has no attribute {name!r}")
        method = getattr(self._rng, name)
        device = self._device

        def draw(*args, **kwargs):
            simulated_array._require(device, f"Generator.{name}")
            simulated_array.count_kernel(device)  # a draw is one kernel, as cuRAND's
            return simulated_array._wrap(method(*args, **kwargs), device)

        return draw
