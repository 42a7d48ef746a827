"""The simulated CuPy's pinned memory (testing/sim_cupy/cuda/pinned_memory.py)
and a copy stream beside a device's stream: what device/batch_staging.py
relies on, and the mistakes the simulation must catch."""
import numpy
import pytest

from minikeras.testing.sim_cupy import simulation
from minikeras.testing.sim_cupy.simulation import RaceError


@pytest.fixture
def gpu(simulated_gpus):
    return simulated_gpus("1")[0]


def _pinned(cupy, values):
    pointer = cupy.cuda.alloc_pinned_memory(values.nbytes)
    host = numpy.frombuffer(pointer, values.dtype, values.size).reshape(values.shape)
    host[...] = values
    return host


def _copy_stream(gpu):
    with gpu.xp.cuda.Device(gpu.cuda_id):
        return gpu.xp.cuda.Stream(non_blocking=True)


def _upload(gpu, stream, host):
    """``host`` to a new device array on ``stream`` (asynchronously); returns
    the array and the copy's event."""
    with gpu.activate(), stream:
        target = gpu.xp.empty(host.shape, host.dtype)
        target.set(host, stream=stream)
        return target, stream.record()


def test_pinned_memory_comes_from_cupys_pinned_pool(gpu):
    cupy = gpu.xp
    cupy.get_default_pinned_memory_pool().free_all_blocks()  # none cached by earlier tests
    before = simulation.pinned_allocations()
    pointer = cupy.cuda.alloc_pinned_memory(1000)
    assert pointer.size() == 1024  # CuPy's pool: 512-byte units, rounded up to a power of two
    assert simulation.pinned_allocations() == before + 1
    address = pointer.ptr
    del pointer  # back to the pool, and handed out again at once
    again = cupy.cuda.alloc_pinned_memory(600)
    assert again.ptr == address and simulation.pinned_allocations() == before + 1
    assert cupy.get_default_pinned_memory_pool().n_free_blocks() == 0


def test_set_checks_as_cupy_does(gpu):
    with gpu.activate():
        target = gpu.xp.zeros((2, 3), dtype="float32")
        with pytest.raises(TypeError, match="float64 array cannot be set to float32 array"):
            target.set(numpy.zeros((2, 3)))
        with pytest.raises(ValueError, match=r"Shape mismatch. Old shape: \(2, 3\), new shape: \(3, 2\)"):
            target.set(numpy.zeros((3, 2), dtype="float32"))
        with pytest.raises(TypeError, match="Only numpy.ndarray"):
            target.set([[0.0] * 3] * 2)


def test_the_device_stream_waits_for_the_copy_event(gpu):
    stream = _copy_stream(gpu)
    host = _pinned(gpu.xp, numpy.arange(6.0, dtype="float32"))
    target, copied = _upload(gpu, stream, host)
    gpu.stream.wait_event(copied)
    with gpu.activate():
        numpy.testing.assert_array_equal((target * 2.0).get(), numpy.arange(6.0) * 2.0)


def test_reading_the_copy_without_waiting_for_it_is_a_race(gpu):
    stream = _copy_stream(gpu)
    target, _ = _upload(gpu, stream, _pinned(gpu.xp, numpy.ones(6, dtype="float32")))
    with pytest.raises(RaceError, match="set()"):
        with gpu.activate():
            target * 2.0  # the copy on the other stream may not have run yet
    stream.synchronize()  # the pinned buffer goes back to CuPy's pool with no copy pending


def test_the_host_may_write_a_pinned_buffer_again_once_the_copy_is_known_done(gpu):
    stream = _copy_stream(gpu)
    host = _pinned(gpu.xp, numpy.ones(6, dtype="float32"))
    first, copied = _upload(gpu, stream, host)
    copied.synchronize()
    host[...] = 2.0
    second, copied = _upload(gpu, stream, host)
    copied.synchronize()
    gpu.stream.wait_event(copied)
    with gpu.activate():
        assert float(first.sum()) == 6.0 and float(second.sum()) == 12.0


def test_writing_a_pinned_buffer_under_a_pending_copy_is_a_race(gpu):
    stream = _copy_stream(gpu)
    host = _pinned(gpu.xp, numpy.ones(6, dtype="float32"))
    _upload(gpu, stream, host)
    host[...] = 2.0  # the copy engine may not have read the buffer yet
    with pytest.raises(RaceError, match="the host wrote pinned memory"):
        _upload(gpu, stream, host)


def test_a_write_before_the_synchronisation_is_caught_by_it(gpu):
    stream = _copy_stream(gpu)
    host = _pinned(gpu.xp, numpy.ones(6, dtype="float32"))
    _, copied = _upload(gpu, stream, host)
    host[0] = 5.0
    with pytest.raises(RaceError, match="the host wrote pinned memory"):
        copied.synchronize()


def test_a_copy_from_pageable_memory_is_staged_at_once(gpu):
    stream = _copy_stream(gpu)
    host = numpy.ones(6, dtype="float32")
    _upload(gpu, stream, host)
    host[...] = 2.0  # CUDA copied pageable memory to its own staging buffer before returning
    _upload(gpu, stream, host)
