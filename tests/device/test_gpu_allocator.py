"""The logical GPU's allocator hook (device/gpu.py, ``_pool_allocator``)
reads its pool only when it must: before an allocation when a limit is set,
and after one only when the pool may have passed the peak; the peak and the
limit are what reading the pool at every allocation gives. On the simulated
CuPy, whose pool follows CuPy 14.2."""
import numpy
import pytest

from minikeras import config
from minikeras.device import registry
from minikeras.errors import ResourceExhaustedError
from minikeras.testing.sim_cupy.cuda import memory as cuda_memory

from tests.device.test_gpu_device import _split


@pytest.fixture
def pool_reads(monkeypatch):
    """Counts ``MemoryPool.used_bytes`` calls, and records the true peak: the
    bytes in use right after each allocation from a pool, the highest seen."""
    seen = {"reads": 0, "peak": {}}
    used_bytes, malloc = cuda_memory.MemoryPool.used_bytes, cuda_memory.MemoryPool.malloc

    def counted_used_bytes(self):
        seen["reads"] += 1
        return used_bytes(self)

    def watched_malloc(self, size):
        pointer = malloc(self, size)
        seen["peak"][id(self)] = max(seen["peak"].get(id(self), 0), used_bytes(self))
        return pointer

    monkeypatch.setattr(cuda_memory.MemoryPool, "used_bytes", counted_used_bytes)
    monkeypatch.setattr(cuda_memory.MemoryPool, "malloc", watched_malloc)
    return seen


def _churn(device, sizes, rng):
    """Allocate arrays of ``sizes`` in turn, freeing a random half of those held after each."""
    held = []
    with device.activate():
        for size in sizes:
            held.append(device.xp.empty(int(size), dtype=numpy.uint8))
            held = [array for array in held if rng.random() < 0.5]


def test_without_a_limit_a_steady_loop_reads_the_pool_rarely(sim_gpus, pool_reads):
    device = registry.list_logical_devices("GPU")[0]
    with device.activate():
        for _ in range(3):  # warm-up: the step's peak is reached
            step = [device.xp.empty(4096, dtype=numpy.uint8) for _ in range(20)]
            del step
    pool_reads["reads"] = 0
    with device.activate():
        for _ in range(10):
            step = [device.xp.empty(4096, dtype=numpy.uint8) for _ in range(20)]
            del step
    assert pool_reads["reads"] <= 20  # one read per step at most, where every allocation read it twice (400)


@pytest.mark.parametrize("limit_mb", [None, 64])
def test_the_peak_is_the_highest_use_after_any_allocation(sim_gpus, pool_reads, limit_mb):
    if limit_mb is not None:
        _split(1, limit_mb)
    device = registry.list_logical_devices("GPU")[0]
    pool_reads["peak"].clear()  # the reserve, taken from the pool directly, is not counted
    rng = numpy.random.default_rng(7)
    _churn(device, rng.integers(1, 200_000, size=300), rng)
    true_peak = pool_reads["peak"][id(device.pool)]
    assert config.get_memory_info(device)["peak"] == true_peak
    config.reset_memory_stats(device)
    assert config.get_memory_info(device)["peak"] == config.get_memory_info(device)["current"] == 0
    pool_reads["peak"].clear()
    _churn(device, rng.integers(1, 50_000, size=100), rng)  # below the first run's peak
    assert config.get_memory_info(device)["peak"] == pool_reads["peak"][id(device.pool)]


def test_the_limit_is_still_checked_on_the_bytes_in_use(sim_gpus):
    _split(1, 1)
    device = registry.list_logical_devices("GPU")[0]
    with device.activate():
        kept = device.xp.empty(600 << 10, dtype=numpy.uint8)
        with pytest.raises(ResourceExhaustedError) as caught:
            device.xp.empty(600 << 10, dtype=numpy.uint8)
        assert caught.value.limit == 1 << 20 and caught.value.in_use == 600 << 10
        del kept
        device.xp.empty(600 << 10, dtype=numpy.uint8)  # freed: fits again
    assert config.get_memory_info(device)["peak"] == 600 << 10
