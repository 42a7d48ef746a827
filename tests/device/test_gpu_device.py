"""GpuDevice's use of CUDA, on two GPUs of the simulated CuPy (no GPU
needed): blocking streams, event-ordered copies between GPUs, the up-front
reserve inside the device's stream and pool, pool calls on the pool's own
CUDA device, CuPy's OutOfMemoryError always surfacing as
ResourceExhaustedError, and CUDA errors as the library's own."""
import numpy
import pytest

from minikeras.device import registry
from minikeras.errors import ResourceExhaustedError


def _split(count, limit_mb=64, index=0):
    gpu = registry.list_physical_devices("GPU")[index]
    registry.set_logical_device_configuration(gpu, [registry.LogicalDeviceConfiguration(limit_mb)] * count)


def test_streams_are_created_blocking(sim_gpus):
    gpus = registry.list_logical_devices("GPU")
    assert len(gpus) == 2 and gpus[0].stream is not gpus[1].stream
    assert all(not device.stream.is_non_blocking for device in gpus)
    assert [device.stream.device_id for device in gpus] == [0, 1]


def test_copy_between_gpus_waits_for_the_source_stream_and_back(sim_gpus, cuda_log):
    source, target = registry.list_logical_devices("GPU")
    with source.activate():
        array = sim_gpus.asarray(numpy.arange(4.0))
    cuda_log.clear()
    copied = target.copy_from(array, source)
    assert copied.device.id == target.physical.index
    log = [entry for entry in cuda_log if entry[0] in ("record", "wait", "copy across")]
    (_, recorded_on, ready), (_, waiting, waited), (_, copy_device, copy_stream), \
        (_, done_on, done), (_, back, back_event) = log
    assert recorded_on is source.stream and waiting is target.stream and waited is ready
    assert copy_device == target.physical.index and copy_stream is target.stream
    # The source's block may be reused only after the copy has read it.
    assert done_on is target.stream and back is source.stream and back_event is done
    assert target.stats.device_copies == 1
    numpy.testing.assert_array_equal(target.to_host(copied), numpy.arange(4.0))


def test_tensor_to_another_gpu_goes_through_the_event_ordered_copy(sim_gpus, cuda_log):
    from minikeras.autograd import Tensor

    source, target = registry.list_logical_devices("GPU")
    tensor = Tensor(numpy.ones(3, "float32"), device=source)
    cuda_log.clear()
    moved = tensor.to(target)
    assert moved.device is target
    kinds = [entry[0] for entry in cuda_log if entry[0] in ("record", "wait", "copy across")]
    assert kinds == ["record", "wait", "copy across", "record", "wait"]


def test_reserve_is_allocated_inside_the_devices_stream_and_pool(sim_gpus, cuda_log):
    _split(2, 64, index=1)
    gpus = registry.list_logical_devices("GPU")
    on_second = [device for device in gpus if device.physical.index == 1]
    assert len(on_second) == 2
    for device in on_second:
        reserved = [entry for entry in cuda_log
                    if entry[0] == "pool malloc" and entry[1] is device.pool and entry[3] == 64 << 20]
        assert len(reserved) == 1, "the reserve must come from the device's own pool"
        _, _, cuda_device, _, stream = reserved[0]
        assert cuda_device == 1 and stream is device.stream


def test_pool_calls_act_on_the_pools_cuda_device(sim_gpus, cuda_log):
    _split(2, 64, index=1)
    device = registry.list_logical_devices("GPU")[-1]
    assert device.physical.index == 1
    cuda_log.clear()
    registry.get_memory_info(device)
    registry.set_memory_limit(device, 128 << 20)
    calls = [entry for entry in cuda_log if entry[0].startswith("pool ") and entry[1] is device.pool]
    assert {entry[0] for entry in calls} >= {"pool used_bytes", "pool set_limit"}
    assert all(entry[2] == 1 for entry in calls), calls


def test_out_of_memory_inside_activate_is_resource_exhausted(sim_gpus):
    device = registry.list_logical_devices("GPU")[0]
    with pytest.raises(ResourceExhaustedError, match="GPU:0"):
        with device.activate():
            raise sim_gpus.cuda.memory.OutOfMemoryError(1234, 0)


def test_pool_limit_surfaces_as_resource_exhausted(sim_gpus):
    _split(1, 1)
    device = registry.list_logical_devices("GPU")[0]
    with pytest.raises(ResourceExhaustedError) as caught:
        with device.activate():
            sim_gpus.empty(2 << 20, dtype=numpy.uint8)
    assert caught.value.limit == 1 << 20 and caught.value.device == "/device:GPU:0"


def test_host_reads_and_uploads_run_on_the_devices_stream(sim_gpus, cuda_log):
    device = registry.list_logical_devices("GPU")[1]
    cuda_log.clear()
    array = device.asarray(numpy.ones(2))
    host = device.to_host(array)
    assert isinstance(host, numpy.ndarray)
    upload = [entry for entry in cuda_log if entry[0] == "asarray"]
    assert upload == [("asarray", 1, device.stream)]
    assert array.device.id == 1
    assert (device.stats.uploads, device.stats.host_syncs) == (1, 1)


def test_work_outside_activate_is_refused_and_another_gpus_array_too(sim_gpus):
    first, second = registry.list_logical_devices("GPU")
    array = first.asarray(numpy.ones(2))
    with pytest.raises(RuntimeError, match="legacy default stream.*outside any device's activate"):
        array * 2.0
    with second.activate(), pytest.raises(ValueError, match=r"resides \(0\) is different from the current device "
                                                            r"\(1\). Peer access is unavailable"):
        array * 2.0


def test_only_real_gpus_have_a_cuda_id_and_nccl_asks_for_it(sim_gpus, monkeypatch):
    from minikeras.distribute import nccl_all_reduce

    _split(2, index=1)
    gpus = registry.list_logical_devices("GPU")
    assert [device.cuda_id for device in gpus] == [0, 1, 1]
    assert registry.get_device("cpu:0").cuda_id is None
    monkeypatch.setattr(nccl_all_reduce, "_nccl_module", lambda: object())
    assert nccl_all_reduce.usable(gpus[:2])  # two physical GPUs
    assert not nccl_all_reduce.usable(gpus[1:])  # two logical GPUs on one physical GPU
    assert not nccl_all_reduce.usable([registry.get_device("cpu:0"), gpus[0]])


def test_a_cuda_error_outside_any_op_is_a_device_error_naming_the_gpu(sim_gpus):
    from minikeras.errors import DeviceError
    from minikeras.testing.sim_cupy.simulation import CUBLASError

    device = registry.list_logical_devices("GPU")[1]
    with pytest.raises(DeviceError, match="work on /device:GPU:1 failed: cuBLAS error CUBLAS_STATUS_EXECUTION_FAILED"):
        with device.activate():
            raise CUBLASError(13)
    with pytest.raises(KeyError):  # not CuPy's: unchanged
        with device.activate():
            raise KeyError("x")
