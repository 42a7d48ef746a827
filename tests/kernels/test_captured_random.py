"""Random draws inside a CUDA graph (``kernels/captured_random.py``), on the
strict simulated GPU, whose capture records the counter kernel's calls and
whose replays re-run them on the device offset: each replay draws new
numbers, a capture itself draws none, eager draws are the generator's own."""
import gc

import numpy
import pytest

from minikeras import kernels, ops
from minikeras.autograd import Tensor
from minikeras.device import registry
from minikeras.device.graph import GraphCaptureError
from minikeras.kernels import captured_random


def _capture_dropout(device, generator, shape=(8, 32), rate=0.5):
    """A graph of ``ops.dropout`` on a static input of ones; its output buffer."""
    with device.activate():
        x = Tensor(device.xp.ones(shape, numpy.float32), device=device)
    captured_random.prepare(device)
    with device.capture() as capture:
        out = ops.dropout(x, rate, generator=generator)
    return capture.graph, out


def test_outside_a_capture_a_draw_is_the_generators_own(simulated_gpu):
    first, twin = simulated_gpu.new_rng(3), simulated_gpu.new_rng(3)
    with simulated_gpu.activate():
        drawn = captured_random.draw(first, simulated_gpu, "random", (4, 5), numpy.float32)
        expected = twin.random((4, 5), dtype=numpy.float32)
        normal = captured_random.draw(first, simulated_gpu, "standard_normal", (3,), numpy.float64)
        expected_normal = twin.standard_normal((3,), dtype=numpy.float64)
    numpy.testing.assert_array_equal(simulated_gpu.to_host(drawn), simulated_gpu.to_host(expected))
    numpy.testing.assert_array_equal(simulated_gpu.to_host(normal), simulated_gpu.to_host(expected_normal))
    assert captured_random.stream_of(first) is None  # no stream, no device state: eager is untouched


def _check_replays(device):
    generator = device.new_rng(11)
    graph, out = _capture_dropout(device, generator)
    stream = captured_random.stream_of(generator)
    assert device.to_host(stream.offset) == 0  # as on CUDA, the capture ran nothing
    cpu = registry.get_device("cpu:0")
    masks = []
    for replay in range(1, 4):
        graph.launch()
        masks.append(device.to_host(out.data).copy())
        assert device.to_host(stream.offset) == replay * out.size
        # The stream's numbers at the offset the replay read: the CPU reference of the kernel.
        state = numpy.array([(replay - 1) * out.size, 0], numpy.uint64)
        uniform = kernels.registered()["counter_random"].reference(cpu, out.shape, numpy.float32, stream.key, state,
                                                                   False)
        numpy.testing.assert_array_equal(masks[-1], (uniform >= 0.5) * numpy.float32(2.0))
    assert not numpy.array_equal(masks[0], masks[1]) and not numpy.array_equal(masks[1], masks[2])
    graph.release()


def test_each_replay_draws_a_new_mask_and_advances_the_device_offset(simulated_gpu):
    _check_replays(simulated_gpu)


@pytest.mark.cuda
def test_each_cuda_graph_replay_draws_the_next_masks_of_the_stream():
    _check_replays(registry.get_device("gpu:0"))  # the compiled kernel, captured and replayed by CUDA


def test_the_masks_follow_the_seed_and_the_rate(simulated_gpu):
    def masks(seed, rate, replays=3, shape=(8, 32)):
        graph, out = _capture_dropout(simulated_gpu, simulated_gpu.new_rng(seed), shape, rate)
        found = []
        for _ in range(replays):
            graph.launch()
            found.append(simulated_gpu.to_host(out.data).copy())
        return numpy.stack(found)

    numpy.testing.assert_array_equal(masks(5, 0.5), masks(5, 0.5))  # a fixed seed repeats
    assert not numpy.array_equal(masks(5, 0.5), masks(6, 0.5))
    kept = masks(1, 0.3, replays=4, shape=(64, 64)) > 0  # 16384 draws: the kept fraction's sd is 0.0036
    assert abs(kept.mean() - 0.7) < 0.02


def test_a_capture_without_prepared_streams_is_refused(simulated_gpus):
    device = simulated_gpus("1")[0]
    generator = device.new_rng(0)
    with device.activate():
        x = Tensor(device.xp.ones((2, 2), numpy.float32), device=device)
    captured_random._tables.pop(device, None)
    with pytest.raises(GraphCaptureError, match="not prepared"):
        with device.capture():
            ops.dropout(x, 0.5, generator=generator)


def test_a_released_stream_row_is_zeroed_and_reused(simulated_gpu):
    generator = simulated_gpu.new_rng(2)
    graph, _ = _capture_dropout(simulated_gpu, generator)
    graph.launch()
    slot = captured_random.stream_of(generator).slot
    del generator, graph
    gc.collect()  # the generator and the graph that held its stream are gone: the row is free
    other = simulated_gpu.new_rng(4)
    graph, out = _capture_dropout(simulated_gpu, other)  # prepare zeroes the released row first
    stream = captured_random.stream_of(other)
    assert stream.slot == slot and simulated_gpu.to_host(stream.offset) == 0
    graph.launch()
    assert simulated_gpu.to_host(stream.offset) == out.size
