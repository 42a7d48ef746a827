"""``GpuDevice.activate()``'s fast path (device/gpu.py, ``_Activation``):
CuPy's device, stream and allocator contexts are entered only when this
thread is not already inside an activation of the same device and stream.
On the strict simulated GPU, whose race detector checks every array call."""
import threading

import numpy
import pytest

import minikeras as mk
from minikeras.testing.sim_cupy.cuda import device as cuda_device, memory as cuda_memory, stream as cuda_stream
from minikeras.testing.sim_cupy.simulation import RaceError


@pytest.fixture
def context_entries(monkeypatch):
    """Counts CuPy context entries, by kind: ``{"device": n, "stream": n, "allocator": n}``."""
    counts = {"device": 0, "stream": 0, "allocator": 0}
    for kind, cls in (("device", cuda_device.Device), ("stream", cuda_stream._BaseStream),
                      ("allocator", cuda_memory._AllocatorScope)):
        enter = cls.__enter__

        def counted(self, _enter=enter, _kind=kind):
            counts[_kind] += 1
            return _enter(self)

        monkeypatch.setattr(cls, "__enter__", counted)
    return counts


def _current_stream(device):
    return device.xp.cuda.get_current_stream()


def test_a_nested_activation_enters_no_cupy_context(simulated_gpu, context_entries):
    device = simulated_gpu
    with device.activate() as active:
        assert active is device
        assert context_entries == {"device": 1, "stream": 1, "allocator": 1}
        for _ in range(10):
            with device.activate():
                assert _current_stream(device) is device.stream
                x = device.xp.ones(3) * 2.0
    assert context_entries == {"device": 1, "stream": 1, "allocator": 1}
    assert _current_stream(device) is not device.stream  # all left: the legacy stream again
    assert device.to_host(x).tolist() == [2.0, 2.0, 2.0]


def test_nested_device_scopes_run_ops_on_the_device_stream(simulated_gpu, context_entries):
    with mk.device("gpu:0"):
        x = mk.tensor(numpy.arange(6, dtype="float32").reshape(2, 3))
        with mk.device("gpu:0"):
            y = mk.ops.sum(mk.ops.relu(x - 2.0) * 3.0)
    assert float(y) == 18.0
    before = dict(context_entries)
    with simulated_gpu.activate():
        mk.ops.sum(mk.ops.relu(x - 2.0) * 3.0)  # every op activates its device: inside, nothing is entered
    assert {kind: context_entries[kind] - before[kind] for kind in before} == {"device": 1, "stream": 1,
                                                                               "allocator": 1}


def test_two_logical_gpus_enter_each_other_and_back(simulated_gpus, context_entries):
    first, second = simulated_gpus("1x2")
    with first.activate():
        with second.activate():
            assert _current_stream(second) is second.stream
            with first.activate():  # the innermost is gpu:1: gpu:0 is entered again
                assert _current_stream(first) is first.stream
                a = first.xp.ones(2) + 1.0
            assert _current_stream(second) is second.stream
            b = second.xp.ones(2) * 3.0
        assert _current_stream(first) is first.stream
        c = a * 2.0
    assert context_entries["stream"] == 3
    assert first.to_host(c).tolist() == [4.0, 4.0] and second.to_host(b).tolist() == [3.0, 3.0]


def test_another_thread_enters_the_contexts_itself(simulated_gpu):
    device, seen = simulated_gpu, []

    def replica():
        with device.activate():
            seen.append(_current_stream(device))
            seen.append(device.to_host(device.xp.ones(2) * 5.0).tolist())

    with device.activate():  # this thread's activation: the other thread is not inside it
        thread = threading.Thread(target=replica)
        thread.start()
        thread.join()
    assert seen == [device.stream, [5.0, 5.0]]


def test_a_capture_inside_an_activation_runs_on_the_capture_stream_and_replays(simulated_gpu):
    device = simulated_gpu
    with device.activate():
        total = device.asarray(numpy.zeros(3, numpy.float32))
        with device.capture() as capture:
            with device.activate():  # device.stream is now the capture's: entered, not skipped
                assert _current_stream(device) is device.stream
                total += 2.0
        assert _current_stream(device) is device.stream  # the outer activation's stream is back
    assert device.to_host(total).tolist() == [0.0, 0.0, 0.0]  # capturing ran nothing
    capture.graph.launch()
    capture.graph.launch()
    assert device.to_host(total).tolist() == [4.0, 4.0, 4.0]


def test_a_race_is_still_reported_inside_a_nested_activation(simulated_gpus):
    first, second = simulated_gpus("1x2")
    with second.activate():
        array = second.xp.ones(4) * 2.0
    with pytest.raises(RaceError, match="no event"):
        with first.activate(), first.activate():
            first.xp.sum(array)


def test_out_of_memory_in_a_nested_activation_is_resource_exhausted_and_the_contexts_are_left(simulated_gpu):
    device = simulated_gpu
    with device.activate():
        with pytest.raises(mk.errors.ResourceExhaustedError, match="GPU:0"):
            with device.activate():
                raise device.xp.cuda.memory.OutOfMemoryError(1234, 0)
        assert _current_stream(device) is device.stream
    assert _current_stream(device) is not device.stream


@pytest.mark.parametrize("batch_on_device", [True, False])
def test_a_training_step_enters_the_cupy_contexts_once(simulated_gpu, context_entries, batch_on_device):
    """``run_train_step`` holds one activation of the batch's device (models/steps.py): the forward,
    backward and optimizer ops inside it enter none of CuPy's contexts (each entered them before)."""
    model = mk.Sequential([mk.layers.Input((4,)), mk.layers.Dense(3, activation="relu"), mk.layers.Dense(2)])
    model.compile(optimizer=mk.optimizers.Adam(1e-3), loss=mk.losses.SparseCategoricalCrossentropy(from_logits=True))
    x, y = numpy.ones((8, 4), "float32"), numpy.array([0, 1] * 4)
    if batch_on_device:
        x, y = mk.tensor(x), mk.tensor(y)
        assert x.device is simulated_gpu
    model.train_on_batch(x, y)  # builds the model and the optimizer's slots
    weights = [simulated_gpu.to_host(weight.data).copy() for weight in model.weights]
    before = dict(context_entries)
    model.run_train_step((x, y))
    assert {kind: context_entries[kind] - before[kind] for kind in before} == {"device": 1, "stream": 1,
                                                                               "allocator": 1}
    assert any((simulated_gpu.to_host(weight.data) != old).any() for weight, old in zip(model.weights, weights))
