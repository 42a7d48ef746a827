"""The simulated CuPy's streams and race detector
(minikeras/testing/sim_cupy/_races.py) under GpuDevice, with two logical GPUs
on one simulated physical GPU (``1x2``), as CI runs the device, distribute,
models and saving tests."""
import numpy
import pytest

import minikeras as mk
from minikeras.device import registry
from minikeras.testing.sim_cupy.simulation import MEMORY_BYTES, RaceError


@pytest.fixture
def two_logical_gpus(simulated_gpus):
    return simulated_gpus("1x2")


def test_1x2_is_two_logical_gpus_with_their_own_streams(two_logical_gpus):
    first, second = two_logical_gpus
    assert first.physical is second.physical
    assert first.stream is not second.stream
    assert first.memory.limit == second.memory.limit == MEMORY_BYTES // 2


def test_unordered_read_of_another_streams_write_is_a_race(two_logical_gpus):
    first, second = two_logical_gpus
    with second.activate():
        array = second.xp.ones(4) * 2.0
    with pytest.raises(RaceError) as caught:
        with first.activate():
            first.xp.sum(array)
    message = str(caught.value)
    for text in ("sum on /device:GPU:0", "__mul__ on /device:GPU:1", "no event"):
        assert text in message


def test_an_event_orders_the_streams(two_logical_gpus):
    first, second = two_logical_gpus
    with second.activate():
        array = second.xp.ones(4) * 2.0
    first.stream.wait_event(second.stream.record())
    with first.activate():
        assert float(first.xp.sum(array)) == 8.0
    with pytest.raises(RaceError, match="writes a buffer"):
        with second.activate():
            array += 1.0  # the read on gpu:0's stream may still be running


def test_tensors_cross_logical_gpus_through_ordered_copies(two_logical_gpus):
    with mk.device("gpu:1"):
        x = mk.tensor(numpy.arange(4.0, dtype="float32")) * 2.0
    with mk.device("gpu:0"):
        y = x * 3.0  # x is copied to gpu:0, ordered with events
    assert y.device.name == "gpu:0"
    numpy.testing.assert_array_equal(y.numpy(), numpy.arange(4.0) * 6.0)
    with mk.device("gpu:1"):
        x.data[...] = 0.0  # gpu:1 may write it again: gpu:0's copy was waited for
    assert registry.get_device("gpu:0").stats.device_copies >= 1


def test_asarray_of_another_logical_gpus_array_is_an_ordered_copy(two_logical_gpus):
    first, second = two_logical_gpus
    with second.activate():
        array = second.xp.arange(3.0) + 1.0
    copied = first.asarray(array)  # read in place, gpu:0's stream would race with gpu:1's
    assert copied is not array and registry.owner_of(copied) is first
    with first.activate():
        assert float(first.xp.sum(copied)) == 6.0
    with second.activate():
        array *= 2.0  # the copy was waited for


def test_freeing_a_block_another_stream_still_reads_is_a_race_at_its_reuse(two_logical_gpus):
    first, second = two_logical_gpus
    with second.activate():
        array = second.xp.ones(4) * 2.0
    first.stream.wait_event(second.stream.record())
    with first.activate():
        first.xp.sum(array)  # gpu:0 reads gpu:1's block ...
    del array  # ... and gpu:1 frees it with nothing ordering it after that read
    with pytest.raises(RaceError, match="reuses a freed block"):
        with second.activate():
            [second.xp.zeros(4) for _ in range(4)]  # one of them gets the freed block back


def test_the_copy_s_second_event_makes_the_free_safe(two_logical_gpus):
    first, second = two_logical_gpus
    with second.activate():
        array = second.xp.ones(4) * 2.0
    copied = first.asarray(array)
    del array
    with second.activate():
        [second.xp.zeros(4) for _ in range(4)]  # no race: copy_from made gpu:1 wait for the copy
    assert copied.shape == (4,)


def test_a_block_freed_after_an_ordered_read_is_reused_without_a_race(two_logical_gpus):
    first, second = two_logical_gpus
    with second.activate():
        array = second.xp.ones(4) * 2.0
    first.stream.wait_event(second.stream.record())
    with first.activate():
        first.xp.sum(array)
    second.stream.wait_event(first.stream.record())  # gpu:1 waits for the read before freeing
    del array
    with second.activate():
        [second.xp.zeros(4) for _ in range(4)]
