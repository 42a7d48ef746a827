"""GpuDevice's memory pools against a fake CuPy whose pool follows CuPy
14.2 (tests/device/fake_cupy.py): reserves returned to the driver when
devices are rebuilt and on ``config.release_memory``/``clear_session``,
no reference cycle keeping a dropped device (and its pool) alive, the
user's limit enforced on live bytes even with the reserve cached, the
reserve kept out of ``current``/``peak``, exact ownership of arrays of two
logical GPUs on one physical GPU (findings 2-4 of issue 20)."""
import gc
import weakref

import numpy
import pytest

import minikeras as mk
from minikeras import config
from minikeras.device import registry
from minikeras.errors import ResourceExhaustedError

from tests.device.test_gpu_device import _split

FREE = 1 << 30  # what the fake driver has on each GPU at the start


def test_rebuilding_the_devices_returns_the_reserves_to_the_driver(fake_gpus):
    for _ in range(3):
        gpu = registry.list_logical_devices("GPU")[0]
        assert gpu.pool.total_bytes() >= int(FREE * 0.8)  # memory growth off: reserved up front
        del gpu
        registry._reset_for_tests()
    assert fake_gpus.driver_free == [FREE, FREE]


def test_the_reserve_leaves_cuda_libraries_their_headroom(fake_gpus):
    # On an H200 a reserve of 95% of what was free left cuBLAS too little for
    # the handles of MirroredModel's replica threads (CUBLAS_STATUS_ALLOC_FAILED).
    gpu = registry.list_logical_devices("GPU")[0]
    assert registry.system_headroom(FREE) == FREE // 10  # a small device keeps a tenth
    assert registry.system_headroom(80 << 30) == 1536 << 20  # TensorFlow's 1.5 GiB on a large one
    reserved = FREE - registry.system_headroom(FREE)
    assert gpu.pool.total_bytes() == -(-reserved // 512) * 512  # CuPy's 512-byte chunks
    assert fake_gpus.driver_free[0] == FREE - gpu.pool.total_bytes()


def test_a_dropped_device_needs_no_cycle_collector(fake_gpus):
    enabled = gc.isenabled()
    gc.disable()
    try:
        device = registry.list_logical_devices("GPU")[0]
        with device.activate():
            kept = fake_gpus.empty(10, dtype=numpy.float32)
        dropped = weakref.ref(device)
        del device, kept
        registry._reset_for_tests()
        assert dropped() is None, "GpuDevice is kept alive by a reference cycle"
    finally:
        if enabled:
            gc.enable()


def test_release_memory_and_clear_session_return_cached_memory(fake_gpus):
    first, second = registry.list_logical_devices("GPU")
    assert fake_gpus.driver_free[0] < FREE
    config.release_memory(first)
    assert first.pool.total_bytes() == 0 and fake_gpus.driver_free[0] == FREE
    with first.activate():
        kept = fake_gpus.empty(1000, dtype=numpy.uint8)  # in use: stays
    mk.backend.clear_session()
    assert second.pool.total_bytes() == 0 and fake_gpus.driver_free[1] == FREE
    assert first.pool.total_bytes() == 1024 and fake_gpus.driver_free[0] == FREE - 1024
    del kept


def test_the_limit_fires_with_the_reserve_cached_and_says_exactly_what(fake_gpus):
    _split(1, 64)
    device = registry.list_logical_devices("GPU")[0]
    assert device.pool.total_bytes() == 64 << 20  # the reserve, cached by the pool
    with device.activate():
        kept = fake_gpus.empty(1000, dtype=numpy.uint8)
    config.set_memory_limit(device, 1 << 20)
    with pytest.raises(ResourceExhaustedError) as caught:
        with device.activate():
            fake_gpus.empty(2 << 20, dtype=numpy.uint8)  # a cache hit in CuPy's pool: its limit never looks
    # 1000 bytes hold a 1024-byte block: CuPy rounds every allocation up to 512 bytes.
    assert str(caught.value) == ("Out of memory on /device:GPU:0: asked for 2097152 bytes with 1024 bytes in use, "
                                 "limit 1048576 bytes.")
    config.set_memory_limit(device, None)
    with device.activate():
        fake_gpus.empty(2 << 20, dtype=numpy.uint8)
    del kept


def test_the_reserve_is_not_current_or_peak(fake_gpus):
    _split(1, 64)
    device = registry.list_logical_devices("GPU")[0]
    assert config.get_memory_info(device) == {"current": 0, "peak": 0}
    with device.activate():
        kept = fake_gpus.empty(1000, dtype=numpy.uint8)
    assert config.get_memory_info(device) == {"current": 1024, "peak": 1024}
    del kept
    assert config.get_memory_info(device) == {"current": 0, "peak": 1024}


def test_arrays_of_two_logical_gpus_on_one_gpu_have_exact_owners(fake_gpus):
    _split(2, 64)
    first, second = registry.list_logical_devices("GPU")[:2]
    assert first.physical is second.physical
    with second.activate():
        array = fake_gpus.asarray(numpy.arange(3.0))
    assert registry.owner_of(array) is second
    assert second.owns(array) and not first.owns(array)
    fake_gpus.log.clear()
    assert numpy.array_equal(registry.to_host(array), numpy.arange(3.0))
    assert [entry for entry in fake_gpus.log if entry[0] == "get"] == [("get", 0, second.stream)]
    fake_gpus.log.clear()
    copied = first.asarray(array)  # read on first's stream: ordered by events, into first's pool
    assert copied is not array and registry.owner_of(copied) is first
    kinds = [(entry[0], entry[1]) for entry in fake_gpus.log if entry[0] in ("record", "wait")]
    assert kinds == [("record", second.stream), ("wait", first.stream),
                     ("record", first.stream), ("wait", second.stream)]


def test_a_seeded_gpu_generator_survives_deepcopy(fake_gpus):
    # CuPy's BitGenerator holds a threading.Lock: copy.deepcopy of a raw
    # cupy Generator raises TypeError; the device's generator copies it.
    import copy

    device = registry.list_logical_devices("GPU")[0]
    generator = device.new_rng([7])
    with device.activate():
        generator.standard_normal(3)
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


def test_tensorflows_force_growth_variable_skips_the_reserve(fake_gpus, monkeypatch):
    monkeypatch.setenv("TF_FORCE_GPU_ALLOW_GROWTH", "true")
    device = registry.list_logical_devices("GPU")[0]
    assert device.pool.total_bytes() == 0 and fake_gpus.driver_free == [FREE, FREE]
