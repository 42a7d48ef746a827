"""The CPU op threads: parallel blocks and the split matrix product."""
import threading

import numpy
import pytest

from minikeras.backend import blas_threads, threads, tuning

pytestmark = pytest.mark.cpu_only(reason="the CPU op-thread pool and BLAS thread policy")


@pytest.fixture
def two_threads():
    previous = threads.num_threads()
    threads.set_num_threads(2)
    yield
    threads.set_num_threads(previous)


def test_parallel_blocks_cover_every_block_once_in_order(two_threads):
    seen = []
    lock = threading.Lock()

    def work(block):
        with lock:
            seen.append(block)
        return block * 10

    assert threads.parallel_blocks(work, 10) == [block * 10 for block in range(10)]
    assert sorted(seen) == list(range(10))


def test_parallel_blocks_setup_runs_once_per_thread_that_takes_part(two_threads):
    states = []
    lock = threading.Lock()

    def setup():
        state = {"thread": threading.current_thread().name, "blocks": []}
        with lock:
            states.append(state)
        return state

    def work(block, state):
        state["blocks"].append(block)
        return state["thread"]

    names = threads.parallel_blocks(work, 40, setup)
    assert 1 <= len(states) <= 2
    assert sorted(b for state in states for b in state["blocks"]) == list(range(40))
    for state in states:  # each block ran with the state of the thread that ran it
        assert all(names[b] == state["thread"] for b in state["blocks"])


def test_parallel_blocks_do_not_wait_for_a_thread_that_never_started(two_threads):
    # Keep the only other pool thread busy: every block must then run in the
    # caller, and the call must return without waiting for that thread.
    release = threading.Event()
    busy = threads._pool().submit(release.wait, 10)
    other = threads._pool().submit(release.wait, 10)
    try:
        names = threads.parallel_blocks(lambda block: threading.current_thread().name, 6)
        assert names == [threading.current_thread().name] * 6
    finally:
        release.set()
        busy.result()
        other.result()


def test_a_task_still_queued_holds_no_arrays_of_the_call(two_threads):
    # The pool threads are busy, so this call's task for them stays queued
    # after it returns; it must not keep the call's arrays alive (memory
    # accounting frees buffers when their last reference goes).
    import gc
    import weakref

    release = threading.Event()
    busy = [threads._pool().submit(release.wait, 10) for _ in range(2)]
    try:
        data = numpy.ones(1000)
        results = threads.parallel_blocks(lambda block: data[block::4] * 2, 4)
        watch = [weakref.ref(r) for r in results] + [weakref.ref(data)]
        del data, results
        gc.collect()
        assert all(ref() is None for ref in watch)
    finally:
        release.set()
        for future in busy:
            future.result()


def test_parallel_blocks_error_stops_the_others_and_propagates(two_threads):
    ran = []

    def work(block):
        ran.append(block)
        if block == 2:
            raise RuntimeError("block 2 failed")
        return block

    with pytest.raises(RuntimeError, match="block 2 failed"):
        threads.parallel_blocks(work, 1000)
    assert len(ran) < 1000


def test_single_threaded_context_runs_in_the_caller(two_threads):
    names = set()

    def work(block):
        names.add(threading.current_thread().name)

    with threads.single_threaded():
        threads.parallel_blocks(work, 5)
    assert names == {threading.current_thread().name}


def test_even_slices_cover_the_range():
    assert threads.even_slices(10, 3) == [slice(0, 4), slice(4, 8), slice(8, 10)]
    assert threads.even_slices(2, 4) == [slice(0, 1), slice(1, 2)]
    assert threads.even_slices(0, 2) == []


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
    for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(tuning, "BLAS_THREADS", None)
    threads._configure_blas()
    assert blas_threads.get() == 1


def test_blas_is_pinned_with_one_op_thread_too(monkeypatch):
    # MINIKERAS_NUM_THREADS=1 (one MPI worker per core) must not leave BLAS
    # at a thread per core: that ran 8-14x slower (issue 19).
    if blas_threads.get() is None:
        pytest.skip("BLAS is not OpenBLAS: its thread count cannot be read")
    for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(tuning, "BLAS_THREADS", None)
    previous = threads.num_threads()
    blas_threads.set_count(2)
    threads.set_num_threads(1)
    try:
        threads._configure_blas()
        assert blas_threads.get() == 1
    finally:
        threads.set_num_threads(previous)


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


@pytest.mark.parametrize("channels", [16, 2])  # patch matrix rebuilt per block / kept whole
def test_convolution_gives_the_same_bits_for_any_thread_count(two_threads, channels):
    import minikeras as mk
    from minikeras.ops.nn.conv import conv_bias_relu

    rng = numpy.random.default_rng(1)
    images = rng.standard_normal((64, 12, 12, channels)).astype(numpy.float32)
    kernel = rng.standard_normal((3, 3, channels, 24)).astype(numpy.float32)
    bias = rng.standard_normal(24).astype(numpy.float32)
    results = []
    for count in (1, 2):
        threads.set_num_threads(count)
        tensors = [mk.Tensor(a, requires_grad=True) for a in (images, kernel, bias)]
        out = conv_bias_relu(*tensors, relu=True, padding="same")
        (out * out).sum().backward()
        results.append([out.numpy()] + [t.grad for t in tensors])
    for one, two in zip(*results):
        numpy.testing.assert_array_equal(one, two)


def test_row_blocks_depend_on_size_not_threads(two_threads, monkeypatch):
    monkeypatch.setattr(tuning, "BLOCK_ELEMENTS", 100)
    spans = []
    for count in (1, 2):
        threads.set_num_threads(count)
        spans.append(threads.row_blocks(numpy, lambda start, stop: (start, stop), 50, 50 * 10))
    assert spans[0] == spans[1] == [(0, 10), (10, 20), (20, 30), (30, 40), (40, 50)]
    assert threads.row_blocks(numpy, lambda start, stop: (start, stop), 0, 0) == [(0, 0)]


def test_dense_gradients_with_both_products_on_two_threads(two_threads):
    import minikeras as mk
    from minikeras import layers

    rng = numpy.random.default_rng(3)
    x = rng.standard_normal((32, 20))
    grad = rng.standard_normal((32, 7))
    layer = layers.Dense(7, activation="relu", dtype="float64")
    tensor = mk.Tensor(x, requires_grad=True)
    out = layer(tensor)
    out.backward(grad)
    kernel, bias = layer.kernel.numpy(), layer.bias.numpy()
    masked = grad * ((x @ kernel + bias) > 0)
    numpy.testing.assert_allclose(tensor.grad.numpy(), masked @ kernel.T, rtol=1e-12, atol=1e-12)
    numpy.testing.assert_allclose(layer.kernel.grad.numpy(), x.T @ masked, rtol=1e-12, atol=1e-12)
    numpy.testing.assert_allclose(layer.bias.grad.numpy(), masked.sum(axis=0), rtol=1e-12, atol=1e-12)
