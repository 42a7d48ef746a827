"""The simulated CuPy's memory pool follows CuPy 14.2's (cupy/cuda/memory.pyx),
the facts GpuDevice's accounting and reserve depend on: 512-byte rounding, one
arena per stream, the best fit split and merged back, the limit checked only
on a cache miss, ``free_all_blocks`` freeing unsplit chunks only."""
import pytest

from minikeras.testing import sim_cupy
from minikeras.testing.sim_cupy.simulation import ENVIRONMENT_VARIABLE


@pytest.fixture
def cuda(monkeypatch):
    monkeypatch.setenv(ENVIRONMENT_VARIABLE, "1")
    with sim_cupy.cuda.Device(0):
        yield sim_cupy.cuda


def test_every_allocation_is_rounded_up_to_512_bytes(cuda):
    pool = cuda.MemoryPool()
    with cuda.Stream():
        kept = [pool.malloc(size) for size in (1, 512, 513, 1000)]
        assert [pointer.mem.size for pointer in kept] == [512, 512, 1024, 1024]
        assert pool.used_bytes() == 3072 and pool.total_bytes() == 3072
        assert pool.malloc(0).mem.size == 0 and pool.used_bytes() == 3072  # no chunk for nothing
    del kept
    assert pool.used_bytes() == 0 and pool.total_bytes() == 3072  # cached, not given back


def test_a_freed_chunk_serves_only_the_stream_that_allocated_it(cuda):
    pool = cuda.MemoryPool()
    first, second = cuda.Stream(), cuda.Stream()
    with first:
        address = pool.malloc(4096).ptr  # freed at once, into first's arena
    with second:
        other = pool.malloc(4096)
        assert other.ptr != address and pool.total_bytes() == 8192  # a cache miss: second's own chunk
    with first:
        assert pool.malloc(4096).ptr == address


def test_the_best_fit_is_split_and_its_parts_merge_back(cuda):
    pool = cuda.MemoryPool()
    with cuda.Stream():
        block = pool.malloc(8192)
        start = block.ptr
        del block
        parts = [pool.malloc(1024) for _ in range(3)]  # carved from the cached 8192-byte chunk
        assert [part.ptr for part in parts] == [start, start + 1024, start + 2048]
        assert pool.total_bytes() == 8192 and pool.n_free_blocks() == 1
        pool.free_all_blocks()
        assert pool.total_bytes() == 8192  # split: nothing can be given back
        del parts
        assert pool.n_free_blocks() == 1  # merged into one chunk again
        pool.free_all_blocks()
        assert pool.total_bytes() == 0


def test_the_limit_is_checked_on_a_cache_miss_against_the_total(cuda):
    pool = cuda.MemoryPool()
    with cuda.Stream():
        del_me = pool.malloc(1 << 20)
        del del_me
        pool.set_limit(size=1 << 19)
        kept = pool.malloc(1 << 20)  # a cache hit: the limit does not look
        assert kept.mem.size == 1 << 20
        with pytest.raises(cuda.memory.OutOfMemoryError, match="limit set to: 524,288 bytes"):
            pool.malloc(1 << 10)  # a miss: 1 MiB held, over the limit
        assert pool.get_limit() == 1 << 19


def test_a_miss_the_driver_cannot_serve_is_out_of_memory(cuda):
    pool = cuda.MemoryPool()
    free, total = cuda.runtime.memGetInfo()
    with cuda.Stream(), pytest.raises(cuda.memory.OutOfMemoryError, match="Out of memory allocating"):
        pool.malloc(free + 512)
    assert cuda.runtime.memGetInfo() == (free, total)
