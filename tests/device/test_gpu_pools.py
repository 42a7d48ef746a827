"""GpuDevice's memory pools on the simulated CuPy, whose pool follows CuPy
14.2 (minikeras/testing/sim_cupy/cuda/memory.py): reserves returned to the
driver when devices are rebuilt and on ``config.release_memory`` /
``clear_session``, no reference cycle keeping a dropped device (and its
pool) alive, the user's limit enforced on live bytes even with the reserve
cached, the reserve kept out of ``current``/``peak``, exact ownership of
arrays of two logical GPUs on one physical GPU (findings 2-4 of issue 20),
and the headroom a reserve leaves to the cuBLAS handles of replica threads
(the H200's CUBLAS_STATUS_ALLOC_FAILED)."""
import gc
import threading
import weakref

import numpy
import pytest

import minikeras as mk
from minikeras import config
from minikeras.device import registry
from minikeras.errors import ResourceExhaustedError

from tests.device.test_gpu_device import _split


def _driver_free(cupy, index):
    """What the simulated driver has left on GPU ``index`` (cudaMemGetInfo)."""
    with cupy.cuda.Device(index):
        return cupy.cuda.runtime.memGetInfo()[0]


def _free_after_handles(cupy):
    """What each GPU's driver has left once this thread's cuBLAS handles exist
    (the reserve makes them first; they stay while the thread lives)."""
    for index in (0, 1):
        with cupy.cuda.Device(index):
            cupy.cuda.device.get_cublas_handle()
    return [_driver_free(cupy, index) for index in (0, 1)]


def test_rebuilding_the_devices_returns_the_reserves_to_the_driver(sim_gpus):
    free = _free_after_handles(sim_gpus)
    for _ in range(3):
        gpu = registry.list_logical_devices("GPU")[0]
        assert gpu.pool.total_bytes() >= int(free[0] * 0.6)  # memory growth off: reserved up front
        del gpu
        registry._reset_for_tests()
    assert [_driver_free(sim_gpus, index) for index in (0, 1)] == free


def test_a_dropped_pool_keeps_its_cached_blocks_from_the_driver(sim_gpus):
    # What the registry's release before dropping a device is for (gpu.py's docstring).
    with sim_gpus.cuda.Device(1):
        free = sim_gpus.cuda.runtime.memGetInfo()[0]
        pool = sim_gpus.cuda.MemoryPool()
        with sim_gpus.cuda.Stream():
            pool.malloc(1 << 20)  # freed at once: cached by the pool
        assert pool.total_bytes() == 1 << 20 and sim_gpus.cuda.runtime.memGetInfo()[0] == free - (1 << 20)
        del pool
        gc.collect()
        assert sim_gpus.cuda.runtime.memGetInfo()[0] == free - (1 << 20)


def test_the_reserve_leaves_cuda_libraries_their_headroom(sim_gpus):
    # On an H200 a reserve of 95% of what was free left cuBLAS too little for
    # the handles of MirroredModel's replica threads (CUBLAS_STATUS_ALLOC_FAILED).
    assert registry.system_headroom(1 << 30) == (1 << 30) // 10  # a small device keeps a tenth
    assert registry.system_headroom(80 << 30) == 1536 << 20  # TensorFlow's 1.5 GiB on a large one
    with sim_gpus.cuda.Device(0):
        sim_gpus.cuda.device.get_cublas_handle()  # the reserve makes this thread's handle first
    free = _driver_free(sim_gpus, 0)
    gpu = registry.list_logical_devices("GPU")[0]
    reserved = free - registry.system_headroom(free)
    assert gpu.pool.total_bytes() == -(-reserved // 512) * 512  # CuPy's 512-byte chunks
    assert _driver_free(sim_gpus, 0) == free - gpu.pool.total_bytes()


def _product_in_a_new_thread(device):
    """A replica thread's first product (it makes the thread's cuBLAS handle)."""
    failures = []

    def work():
        try:
            with device.activate():
                a = device.asarray(numpy.ones((4, 4), "float32"))
                device.to_host(a @ a)
        except Exception as error:  # noqa: BLE001  (reported to the test)
            failures.append(error)

    thread = threading.Thread(target=work)
    thread.start()
    thread.join()
    return failures


def test_replica_threads_get_their_cublas_handles_from_the_headroom(sim_gpus):
    gpu = registry.list_logical_devices("GPU")[0]
    assert _product_in_a_new_thread(gpu) == []


def test_without_headroom_a_replica_threads_first_product_fails_as_on_the_h200(sim_gpus, monkeypatch):
    monkeypatch.setattr(registry, "system_headroom", lambda free: 0)  # the reserve takes all the driver has
    gpu = registry.list_logical_devices("GPU")[0]
    (failure,) = _product_in_a_new_thread(gpu)
    assert isinstance(failure, ResourceExhaustedError) and "CUBLAS_STATUS_ALLOC_FAILED" in str(failure)
    del failure  # its traceback holds the thread's arrays: while they live, the reserve is split
    gc.collect()
    config.release_memory(gpu)
    assert _product_in_a_new_thread(gpu) == []  # with the reserve given back, the handle fits


def test_a_dropped_device_needs_no_cycle_collector(sim_gpus):
    enabled = gc.isenabled()
    gc.disable()
    try:
        device = registry.list_logical_devices("GPU")[0]
        with device.activate():
            kept = sim_gpus.empty(10, dtype=numpy.float32)
        dropped = weakref.ref(device)
        del device, kept
        registry._reset_for_tests()
        assert dropped() is None, "GpuDevice is kept alive by a reference cycle"
    finally:
        if enabled:
            gc.enable()


def test_release_memory_and_clear_session_return_cached_memory(sim_gpus):
    free = _free_after_handles(sim_gpus)
    first, second = registry.list_logical_devices("GPU")
    assert _driver_free(sim_gpus, 0) < free[0]
    config.release_memory(first)
    assert first.pool.total_bytes() == 0 and _driver_free(sim_gpus, 0) == free[0]
    with first.activate():
        kept = sim_gpus.empty(1000, dtype=numpy.uint8)  # in use: stays
    mk.backend.clear_session()
    assert second.pool.total_bytes() == 0 and _driver_free(sim_gpus, 1) == free[1]
    assert first.pool.total_bytes() == 1024 and _driver_free(sim_gpus, 0) == free[0] - 1024
    del kept


def test_the_limit_fires_with_the_reserve_cached_and_says_exactly_what(sim_gpus):
    _split(1, 64)
    device = registry.list_logical_devices("GPU")[0]
    assert device.pool.total_bytes() == 64 << 20  # the reserve, cached by the pool
    with device.activate():
        kept = sim_gpus.empty(1000, dtype=numpy.uint8)
    config.set_memory_limit(device, 1 << 20)
    with pytest.raises(ResourceExhaustedError) as caught:
        with device.activate():
            sim_gpus.empty(2 << 20, dtype=numpy.uint8)  # a cache hit in CuPy's pool: its limit never looks
    # 1000 bytes hold a 1024-byte block: CuPy rounds every allocation up to 512 bytes.
    assert str(caught.value) == ("Out of memory on /device:GPU:0: asked for 2097152 bytes with 1024 bytes in use, "
                                 "limit 1048576 bytes.")
    config.set_memory_limit(device, None)
    with device.activate():
        sim_gpus.empty(2 << 20, dtype=numpy.uint8)
    del kept


def test_the_reserve_is_not_current_or_peak(sim_gpus):
    _split(1, 64)
    device = registry.list_logical_devices("GPU")[0]
    assert config.get_memory_info(device) == {"current": 0, "peak": 0}
    with device.activate():
        kept = sim_gpus.empty(1000, dtype=numpy.uint8)
    assert config.get_memory_info(device) == {"current": 1024, "peak": 1024}
    del kept
    assert config.get_memory_info(device) == {"current": 0, "peak": 1024}


def test_a_split_reserve_cannot_be_given_back_while_an_array_lives_in_it(sim_gpus):
    _split(1, 64)
    device = registry.list_logical_devices("GPU")[0]
    with device.activate():
        kept = sim_gpus.empty(1000, dtype=numpy.uint8)
    config.release_memory(device)  # free_all_blocks frees whole chunks only: none here
    assert device.pool.total_bytes() == 64 << 20
    del kept
    config.release_memory(device)
    assert device.pool.total_bytes() == 0


def test_arrays_of_two_logical_gpus_on_one_gpu_have_exact_owners(sim_gpus, cuda_log):
    _split(2, 64)
    first, second = registry.list_logical_devices("GPU")[:2]
    assert first.physical is second.physical
    with second.activate():
        array = sim_gpus.asarray(numpy.arange(3.0))
    assert registry.owner_of(array) is second
    assert second.owns(array) and not first.owns(array)
    cuda_log.clear()
    assert numpy.array_equal(registry.to_host(array), numpy.arange(3.0))
    assert second.stats.host_syncs == 1
    cuda_log.clear()
    copied = first.asarray(array)  # read on first's stream: ordered by events, into first's pool
    assert copied is not array and registry.owner_of(copied) is first
    kinds = [(entry[0], entry[1]) for entry in cuda_log if entry[0] in ("record", "wait")]
    assert kinds == [("record", second.stream), ("wait", first.stream),
                     ("record", first.stream), ("wait", second.stream)]


def test_a_seeded_gpu_generator_survives_deepcopy(sim_gpus):
    # CuPy's BitGenerator holds a threading.Lock: copy.deepcopy of a raw
    # cupy Generator raises TypeError; the device's generator copies it.
    import copy

    device = registry.list_logical_devices("GPU")[0]
    generator = device.new_rng([7])
    with device.activate():
        generator.standard_normal(3)
    with pytest.raises(TypeError):
        copy.deepcopy(generator._generator)
    copied = copy.deepcopy(generator)
    with device.activate():
        expected, drawn = generator.standard_normal(4).get(), copied.standard_normal(4).get()
    numpy.testing.assert_array_equal(drawn, expected)  # the same next draws, from independent states
    with device.activate():
        assert not numpy.array_equal(generator.standard_normal(4).get(), drawn)


def test_deepcopy_of_a_model_keeps_its_devices(fresh_devices):
    import copy

    from minikeras import layers

    model = mk.Sequential([layers.Input((4,)), layers.Dropout(0.5, seed=3), layers.Dense(2)])
    model(mk.tensor(numpy.ones((2, 4), "float32")), training=True)  # the Dropout's seeded generator exists
    clone = copy.deepcopy(model)
    assert clone.layers[1].kernel.device is model.layers[1].kernel.device
    x = mk.tensor(numpy.ones((8, 4), "float32"))
    numpy.testing.assert_array_equal(clone(x, training=True).numpy(), model(x, training=True).numpy())
    device = model.layers[1].kernel.device
    if device.kind == "gpu":  # the copies live in the device's own pool
        assert all(device.owns(weight.data) for weight in clone.weights)


def test_tensorflows_force_growth_variable_skips_the_reserve(sim_gpus, monkeypatch):
    free = _free_after_handles(sim_gpus)
    monkeypatch.setenv("TF_FORCE_GPU_ALLOW_GROWTH", "true")
    device = registry.list_logical_devices("GPU")[0]
    assert device.pool.total_bytes() == 0 and [_driver_free(sim_gpus, index) for index in (0, 1)] == free
