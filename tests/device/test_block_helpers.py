"""The devices' block helpers: what ops and optimizers call instead of the
CPU thread pool (row_blocks, elementwise_blocks, matmul_all, sum_in_order,
worker_context), on the CPU and on the simulated GPU."""
import threading

import numpy
import pytest

from minikeras.backend import threads, tuning
from minikeras.device import CpuDevice, registry


@pytest.fixture
def cpu():
    return registry.get_device("cpu:0")


@pytest.fixture
def two_threads():
    previous = threads.num_threads()
    threads.set_num_threads(2)
    yield
    threads.set_num_threads(previous)


def test_cpu_row_blocks_cover_all_rows_in_cache_sized_blocks(cpu, two_threads, monkeypatch):
    monkeypatch.setattr(tuning, "BLOCK_ELEMENTS", 10)
    spans = cpu.row_blocks(lambda start, stop: (start, stop), 12, 12 * 5)
    assert spans == [(0, 2), (2, 4), (4, 6), (6, 8), (8, 10), (10, 12)]


def test_one_block_on_the_gpu(simulated_gpu):
    assert simulated_gpu.row_blocks(lambda start, stop: (start, stop), 12, 10**9) == [(0, 12)]
    seen = []
    with simulated_gpu.activate():
        arrays = (simulated_gpu.xp.zeros(10), None)
        simulated_gpu.elementwise_blocks(lambda a, b: seen.append((a.shape, b)), arrays)
    assert seen == [((10,), None)]


def test_cpu_elementwise_blocks_split_large_contiguous_arrays(cpu, two_threads, monkeypatch):
    monkeypatch.setattr(tuning, "ELEMENTWISE_PARALLEL_MIN", 8)
    target = numpy.zeros((4, 5))
    source = numpy.arange(20.0).reshape(4, 5)
    sizes = []
    lock = threading.Lock()

    def work(out, values, missing):
        assert missing is None
        with lock:
            sizes.append(out.size)
        out += values * 2

    cpu.elementwise_blocks(work, (target, source, None))
    numpy.testing.assert_array_equal(target, source * 2)
    assert sorted(sizes) == [5, 5, 5, 5]  # two slices per op thread


def test_cpu_elementwise_blocks_keep_strided_arrays_whole(cpu, two_threads, monkeypatch):
    monkeypatch.setattr(tuning, "ELEMENTWISE_PARALLEL_MIN", 1)
    target = numpy.zeros((6, 6))[:, ::2]  # a flat view would be a copy: updates would be lost
    calls = []

    def work(out):
        calls.append(out.shape)
        out += 1

    cpu.elementwise_blocks(work, (target,))
    assert calls == [(6, 3)]
    numpy.testing.assert_array_equal(target, 1)


@pytest.mark.parametrize("large", [False, True])
@pytest.mark.parametrize("handed_off", [False, True])
def test_cpu_matmul_all_equals_the_products(cpu, two_threads, monkeypatch, large, handed_off):
    monkeypatch.setattr(tuning, "PARALLEL_MATMUL_MIN", 1 if large else 1 << 40)
    monkeypatch.setattr(tuning, "PARALLEL_PRODUCTS_MIN", 0 if handed_off else 1 << 40)
    rng = numpy.random.default_rng(0)
    pairs = [(rng.standard_normal((7, 3)), rng.standard_normal((3, 5))),
             (rng.standard_normal((2, 4)), rng.standard_normal((4, 9)))]
    for result, (a, b) in zip(cpu.matmul_all(pairs), pairs):
        numpy.testing.assert_allclose(result, a @ b, rtol=1e-12)


def test_cpu_matmul_all_runs_tiny_products_in_the_caller(cpu, two_threads, monkeypatch):
    # Handing two tiny products to a pool thread costs more than they do.
    handed = []
    monkeypatch.setattr(cpu, "parallel_blocks", lambda work, count, setup=None: handed.append(count))
    pairs = [(numpy.ones((2, 4)), numpy.ones((4, 4))), (numpy.ones((4, 2)), numpy.ones((2, 4)))]
    results = cpu.matmul_all(pairs)
    assert handed == [] and [r.tolist() for r in results] == [[[4.0] * 4] * 2, [[2.0] * 4] * 4]
    monkeypatch.setattr(tuning, "PARALLEL_PRODUCTS_MIN", 2 * 4 * 4 + 4 * 2 * 4)  # just reached: handed off
    cpu.matmul_all(pairs)
    assert handed == [2]


def test_sum_in_order_on_every_device_kind(cpu, simulated_gpu):
    for device in (cpu, simulated_gpu):
        with device.activate():
            parts = [device.asarray(numpy.full(3, value)) for value in (1.0, 2.0, 4.0)]
            numpy.testing.assert_array_equal(device.to_host(device.sum_in_order(parts)), [7.0, 7.0, 7.0])
            assert device.to_host(parts[0]).tolist() == [1.0, 1.0, 1.0]  # parts unchanged
            empty = device.to_host(device.sum_in_order([], (2,), numpy.float32))
        assert empty.dtype == numpy.float32 and empty.tolist() == [0.0, 0.0]


def test_worker_context_runs_blocks_in_the_worker_thread(cpu, two_threads):
    def blocks_run_by():
        names = set()
        lock = threading.Lock()

        def work(block, _):
            with lock:
                names.add(threading.get_ident())

        cpu.parallel_blocks(work, 64)
        return names

    seen = {}

    def worker(use_context):
        if use_context:
            with cpu.worker_context():
                seen[use_context] = (threading.get_ident(), blocks_run_by())
        else:
            seen[use_context] = (threading.get_ident(), blocks_run_by())

    # Named like a replica thread: the name alone no longer keeps its blocks home.
    for use_context in (True, False):
        thread = threading.Thread(target=worker, args=(use_context,), name="minikeras-replica-cpu:9")
        thread.start()
        thread.join()
    ident, runners = seen[True]
    assert runners == {ident}
    # Outside the context the pool may take blocks (it need not: it can wake late),
    # and the blocks still all run.
    assert seen[False][1]
    assert isinstance(cpu, CpuDevice)


def test_tuning_overrides_come_from_the_environment(monkeypatch):
    monkeypatch.setenv("MINIKERAS_CHUNK_BYTES", "4096")
    assert tuning._read("CHUNK_BYTES", 1 << 22, minimum=1) == 4096
    monkeypatch.setenv("MINIKERAS_COPY_NS", "0.5")
    assert tuning._read("COPY_NS", 0.15, float) == 0.5
    monkeypatch.delenv("MINIKERAS_COPY_NS")
    assert tuning._read("COPY_NS", 0.15, float) == 0.15
    monkeypatch.setenv("MINIKERAS_CHUNK_BYTES", "lots")
    with pytest.raises(ValueError, match="MINIKERAS_CHUNK_BYTES must be an integer >= 1, received 'lots'"):
        tuning._read("CHUNK_BYTES", 1 << 22, minimum=1)
    monkeypatch.setenv("MINIKERAS_CHUNK_BYTES", "0")
    with pytest.raises(ValueError, match="received '0'"):
        tuning._read("CHUNK_BYTES", 1 << 22, minimum=1)


def test_worker_context_alone_gives_a_worker_the_op_threads_back(cpu, two_threads):
    """A replica worker whose peers wait for it (replica 0's update that
    they copy) runs its ops' blocks on the op threads again, then returns
    to running them itself."""
    seen = []

    def worker():
        with cpu.worker_context():
            seen.append(threads._in_caller())
            with cpu.worker_context(alone=True):
                seen.append(threads._in_caller())
            seen.append(threads._in_caller())

    thread = threading.Thread(target=worker, name="minikeras-replica-cpu:9")
    thread.start()
    thread.join()
    assert seen == [True, False, True]
