"""The CPU op threads: parallel blocks and the split matrix product."""
import threading

import numpy
import pytest

from minikeras.backend import blas_threads, threads


@pytest.fixture
def two_threads():
    previous = threads.num_threads()
    threads.set_num_threads(2)
    yield
    threads.set_num_threads(previous)


def test_parallel_blocks_cover_every_block_once(two_threads):
    seen = []
    lock = threading.Lock()

    def work(worker, workers):
        for block in range(10)[worker::workers]:
            with lock:
                seen.append(block)
        return worker

    assert sorted(threads.parallel_blocks(work, 10)) == [0, 1]
    assert sorted(seen) == list(range(10))


def test_single_threaded_context_runs_in_the_caller(two_threads):
    names = []

    def work(worker, workers):
        names.append((threading.current_thread().name, workers))

    with threads.single_threaded():
        threads.parallel_blocks(work, 5)
    assert names == [(threading.current_thread().name, 1)]


@pytest.mark.parametrize("shape_a, shape_b, transpose_a", [
    ((512, 300), (300, 256), False), ((8, 4000), (4000, 1200), False), ((600, 512), (600, 128), True),
])
def test_split_matmul_matches_numpy(two_threads, shape_a, shape_b, transpose_a):
    rng = numpy.random.default_rng(0)
    a = rng.standard_normal(shape_a, dtype=numpy.float32)
    b = rng.standard_normal(shape_b, dtype=numpy.float32)
    left = a.T if transpose_a else a
    assert left.shape[0] * left.shape[1] * b.shape[1] >= threads.PARALLEL_MATMUL_MIN
    result = threads.matmul(left, b)
    assert result.dtype == numpy.float32
    numpy.testing.assert_allclose(result, left @ b, rtol=1e-4, atol=1e-3)


def test_bad_thread_count_raises():
    with pytest.raises(ValueError, match="positive int"):
        threads.set_num_threads(0)


def test_blas_is_single_threaded_after_first_op_unless_user_chose(monkeypatch, two_threads):
    if blas_threads.get() is None:
        pytest.skip("BLAS is not OpenBLAS: its thread count cannot be read")
    for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MINIKERAS_BLAS_THREADS"):
        monkeypatch.delenv(name, raising=False)
    threads._configure_blas()
    assert blas_threads.get() == 1


@pytest.mark.parametrize("amsgrad", [False, True])
def test_adam_in_parallel_slices_equals_one_pass(two_threads, amsgrad):
    import minikeras as mk

    rng = numpy.random.default_rng(0)
    start = rng.standard_normal((600, 500)).astype(numpy.float32)  # 300K elements: the sliced path
    results = []
    for count in (1, 2):
        threads.set_num_threads(count)
        weight = mk.Tensor(start.copy(), requires_grad=True)
        optimizer = mk.optimizers.Adam(0.01, amsgrad=amsgrad)
        for step in range(3):
            gradient = numpy.random.default_rng(step).standard_normal(start.shape).astype(numpy.float32)
            optimizer.apply_gradients([(gradient, weight)])
        results.append(weight.numpy())
    numpy.testing.assert_array_equal(results[0], results[1])
    assert not numpy.array_equal(results[0], start)
