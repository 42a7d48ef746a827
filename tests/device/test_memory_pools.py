"""Per logical device memory: what is counted, limits, ResourceExhaustedError
and recovery, configuration errors; GPU pools (gpu marker)."""
import gc
import math
import threading
import traceback

import numpy
import pytest

import minikeras as mk
from minikeras import config, layers
from minikeras.autograd import Function
from minikeras.device import registry
from minikeras.errors import ResourceExhaustedError


def _default():
    """The default device's name (cpu:0, or gpu:0 on a GPU or the simulated GPU)."""
    return registry.default_device().name


def _held(nbytes):
    """Bytes an allocation of ``nbytes`` holds on the default device: exact on
    the CPU, rounded up to CuPy's 512-byte pool chunks on a GPU."""
    return registry.default_device().memory.allocation_size(nbytes)


def _current(device=None):
    return config.get_memory_info(device or _default())["current"]


def _split_cpu(count, limit_mb=None):
    cpu = config.list_physical_devices("CPU")[0]
    config.set_logical_device_configuration(cpu, [config.LogicalDeviceConfiguration(limit_mb)] * count)
    return config.list_logical_devices("CPU")


class _SavesACopy(Function):
    """Saves a fresh array (not an input, not the output) for backward."""

    def forward(self, x):
        self.save_for_backward(x * 3.0)
        return x + 1.0

    def backward(self, grad):
        (tripled,) = self.saved
        return grad * tripled


# ------------------------------------------------------------- accounting
def test_tensors_outputs_saved_arrays_and_gradients_are_counted(fresh_devices):
    base = _current()
    x = mk.tensor(numpy.ones(1000, "float32"), requires_grad=True)
    assert _current() == base + _held(4000)
    y = _SavesACopy().apply(x)  # output + the array kept for backward
    assert _current() == base + 3 * _held(4000)
    y.sum().backward()  # frees the saved array; x.grad appears
    assert x.grad is not None
    del y
    assert _current() == base + 2 * _held(4000)
    flat = x.reshape(10, 100)  # a view: shares x's count
    assert _current() == base + 2 * _held(4000)
    del flat, x
    assert _current() == base


def test_gradients_between_ops_are_counted(fresh_devices):
    x = mk.tensor(numpy.ones(1000, "float32"), requires_grad=True)
    out = ((x * 2.0) * 2.0) * 2.0
    loss = out.sum()
    base = _current()
    config.reset_memory_stats(_default())
    loss.backward(retain_graph=True)
    # The gradient of each intermediate (4000 bytes) is counted while the
    # next op's backward makes its own (or x.grad): two at a time.
    assert config.get_memory_info(_default())["peak"] >= base + 2 * _held(4000)
    x.grad = None
    config.set_memory_limit(_default(), base + _held(4000))  # room for x.grad alone
    with pytest.raises(ResourceExhaustedError):
        loss.backward()
    config.set_memory_limit(_default(), None)


def test_graph_dropped_without_backward_releases_saved_arrays(fresh_devices):
    base = _current()
    x = mk.tensor(numpy.ones(500, "float32"), requires_grad=True)
    y = _SavesACopy().apply(x)
    assert _current() == base + 3 * _held(2000)
    del y  # the graph (and what it saved) goes with its last output
    assert _current() == base + _held(2000)


def test_optimizer_slots_are_counted(fresh_devices):
    weight = mk.tensor(numpy.zeros(1000, "float32"), requires_grad=True)
    base = _current()
    optimizer = mk.optimizers.Adam()
    optimizer.apply_gradients([(numpy.ones(1000, "float32"), weight)])
    slots = sum(array.nbytes for array in optimizer.variables[1:])
    assert slots == 8000  # momentum and velocity
    assert _current() >= base + slots
    del optimizer
    assert _current() == base


def test_slice_of_user_data_counts_its_own_bytes(fresh_devices):
    base = _current()
    dataset = numpy.zeros((1000, 100), "float32")  # 400 kB the library never allocated
    batch = mk.tensor(dataset[10:20])
    assert _current() == base + _held(4000)
    del batch
    assert _current() == base


def test_fit_does_not_charge_the_dataset(fresh_devices):
    mk.random.seed(0)
    model = mk.Sequential([layers.Input((100,)), layers.Dense(10)])
    model.compile("sgd", "mse")
    x, y = numpy.zeros((5000, 100), "float32"), numpy.zeros((5000, 10), "float32")
    base = _current()
    config.reset_memory_stats(_default())
    model.fit(x, y, batch_size=10, epochs=1, steps_per_epoch=3, shuffle=False, verbose=0)
    assert config.get_memory_info(_default())["peak"] - base < x.nbytes / 10


def test_peak_and_reset(fresh_devices):
    base = _current()
    config.reset_memory_stats(_default())
    big = mk.tensor(numpy.ones(10_000, "float32"))
    del big
    info = config.get_memory_info(_default())
    assert info == {"current": base, "peak": base + _held(40_000)}
    config.reset_memory_stats(registry.default_device().canonical)
    assert config.get_memory_info(_default())["peak"] == base


def test_logical_devices_count_separately_and_across_threads(fresh_devices):
    _split_cpu(2)
    base0, base1 = _current("cpu:0"), _current("cpu:1")
    kept = []

    def allocate(device):
        with mk.device(device):
            for _ in range(50):
                kept.append(mk.tensor(numpy.ones(100, "float32")))

    threads = [threading.Thread(target=allocate, args=(d,)) for d in ("cpu:1", "cpu:1", "cpu:0")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert _current("cpu:1") == base1 + 2 * 50 * 400
    assert _current("cpu:0") == base0 + 50 * 400
    kept.clear()
    assert (_current("cpu:0"), _current("cpu:1")) == (base0, base1)


# ------------------------------------------------------------------ limits
def test_limit_error_names_device_bytes_in_use_and_limit(fresh_devices):
    _split_cpu(2, limit_mb=1)
    with mk.device("cpu:1"):
        kept = mk.tensor(numpy.ones(200_000, "float32"))  # 800 kB of the 1 MiB
        in_use = _current("cpu:1")
        with pytest.raises(ResourceExhaustedError) as caught:
            mk.tensor(numpy.ones(100_000, "float32"))
    error = caught.value
    assert (error.device, error.requested, error.in_use, error.limit) == ("/device:CPU:1", 400_000, in_use, 2**20)
    for text in ("/device:CPU:1", "400000", str(in_use), str(2**20)):
        assert text in str(error)
    assert isinstance(error, RuntimeError)
    assert _current("cpu:1") == in_use  # the failed allocation is not counted
    assert _current("cpu:0") < 2**20  # the other device is unaffected
    del kept


def test_set_memory_limit_at_run_time(fresh_devices):
    base = _current()
    config.set_memory_limit(_default(), base + 1000)
    with pytest.raises(ResourceExhaustedError):
        mk.tensor(numpy.ones(1000, "float32"))
    config.set_memory_limit(_default(), None)
    mk.tensor(numpy.ones(1000, "float32"))


def _mlp():
    mk.random.seed(0)
    model = mk.Sequential([layers.Input((32,)), layers.Dense(128, activation="relu"),
                           layers.Dense(128, activation="relu"), layers.Dense(10)])
    model.compile("adam", mk.losses.SparseCategoricalCrossentropy(from_logits=True))
    return model


def _data(count=512):
    rng = numpy.random.default_rng(0)
    return rng.normal(size=(count, 32)).astype("float32"), rng.integers(0, 10, count)


def test_training_continues_with_a_smaller_batch(fresh_devices):
    model = _mlp()
    x, y = _data()
    model.train_on_batch(x[:32], y[:32])  # Adam's state exists now
    # Room for the gradients and a small batch's activations, not for 512 samples.
    config.set_memory_limit(_default(), _current() + 500_000)
    before, weights = _current(), model.get_weights()
    with pytest.raises(ResourceExhaustedError, match=registry.default_device().canonical):
        model.fit(x, y, batch_size=512, epochs=1, verbose=0)
    assert _current() == before
    assert all(numpy.array_equal(a, b) for a, b in zip(weights, model.get_weights()))
    history = model.fit(x, y, batch_size=64, epochs=3, verbose=0)
    losses = history.history["loss"]
    assert losses[-1] < losses[0]  # it trains


def _where(error):
    frames = traceback.extract_tb(error.__traceback__)
    files = [frame.filename.replace("\\", "/") for frame in frames]
    if any(f.endswith("minikeras/optimizers/_state.py") or f.endswith("minikeras/optimizers/_slots.py")
           for f in files):
        return "optimizer"
    if any(f.endswith("minikeras/autograd/engine.py") for f in files):
        return "backward"
    return "forward"


def _fit_or_failure(model, x, y, batch_size):
    """Where the step failed ("forward", "backward", "optimizer"), or None.
    The exception is gone when this returns, as after a handled error.
    (Traceback filtering is off meanwhile: the library's frames say where.)"""
    filtering = config.is_traceback_filtering_enabled()
    config.disable_traceback_filtering()
    try:
        model.fit(x, y, batch_size=batch_size, epochs=1, verbose=0)
    except ResourceExhaustedError as error:
        return _where(error)
    finally:
        if filtering:
            config.enable_traceback_filtering()
    return None


def test_failure_anywhere_in_a_step_leaves_no_trace(fresh_devices):
    # A small batch: the step's memory is mostly gradients and Adam's state,
    # so the scanned limits fall in the forward, the backward and the
    # optimizer's first build alike.
    x, y = _data(32)
    probe = _mlp()
    start = _current()
    config.reset_memory_stats(_default())
    probe.fit(x, y, batch_size=32, epochs=1, verbose=0)
    step_bytes = config.get_memory_info(_default())["peak"] - start  # what a first step adds at its peak
    seen = set()
    for fraction in numpy.linspace(0.05, 1.0, 20):
        model = probe = None
        gc.collect()  # models hold reference cycles (layers <-> graph nodes)
        model = _mlp()
        base, weights = _current(), model.get_weights()
        config.set_memory_limit(_default(), base + int(step_bytes * fraction))
        where = _fit_or_failure(model, x, y, 32)
        if where is not None:
            seen.add(where)
            assert _current() == base, f"memory left behind ({where}, fraction {fraction:.2f})"
            assert all(numpy.array_equal(a, b) for a, b in zip(weights, model.get_weights()))
            assert not model.optimizer.built
        config.set_memory_limit(_default(), None)
        model.fit(x, y, batch_size=16, epochs=1, verbose=0)  # and it trains afterwards
        assert model.optimizer.iterations == (2 if where else 3)
    assert seen == {"forward", "backward", "optimizer"}


# ----------------------------------------------------------- configuration
def test_memory_limit_in_megabytes_and_fraction_on_cpu(fresh_devices):
    cpu = config.list_physical_devices("CPU")[0]
    config.set_logical_device_configuration(cpu, [config.LogicalDeviceConfiguration(memory_limit=1.5),
                                                  config.LogicalDeviceConfiguration()])
    config.set_per_process_memory_fraction(cpu, 0.5)
    first, second = config.list_logical_devices("CPU")
    share = int(cpu.total_memory * 0.5 / 2)
    assert first.memory.limit == min(int(1.5 * 2**20), share)
    assert second.memory.limit == share


def test_bad_limits_are_clear_errors(fresh_devices):
    kept = mk.tensor(numpy.ones(10_000, "float32"))
    in_use = _current()
    with pytest.raises(ValueError, match=f"{in_use} bytes are already in use"):
        config.set_memory_limit(_default(), 100)
    with pytest.raises(ValueError, match=">= 0"):
        config.set_memory_limit(_default(), -1)
    with pytest.raises(ValueError, match=">= 0"):
        config.set_memory_limit(_default(), math.nan)
    with pytest.raises(TypeError, match="number of bytes"):
        config.set_memory_limit(_default(), "1GB")
    with pytest.raises(TypeError, match="number of bytes"):
        config.set_memory_limit(_default(), True)
    with pytest.raises(ValueError, match="> 0 megabytes"):
        config.LogicalDeviceConfiguration(memory_limit=-5)
    with pytest.raises(ValueError, match="> 0 megabytes"):
        config.LogicalDeviceConfiguration(memory_limit=0)
    with pytest.raises(TypeError, match="number of megabytes"):
        config.LogicalDeviceConfiguration(memory_limit="lots")
    assert _current() == in_use
    del kept


def test_bad_fractions_and_growth_flags(fresh_devices):
    cpu = config.list_physical_devices("CPU")[0]
    with pytest.raises(ValueError, match=r"\(0, 1\]"):
        config.set_per_process_memory_fraction(cpu, 1.5)
    with pytest.raises(ValueError, match=r"\(0, 1\]"):
        config.set_per_process_memory_fraction(cpu, 0)
    with pytest.raises(TypeError, match="must be a number"):
        config.set_per_process_memory_fraction(cpu, "half")
    with pytest.raises(TypeError, match="True or False"):
        config.set_memory_growth(cpu, "yes")
    with pytest.raises(TypeError, match="PhysicalDevice"):
        config.set_memory_growth("cpu:0", True)


def test_configuring_after_first_use_is_an_error(fresh_devices):
    cpu = config.list_physical_devices("CPU")[0]
    mk.tensor([1.0])  # first use
    for call in (lambda: config.set_logical_device_configuration(cpu, [config.LogicalDeviceConfiguration(64)]),
                 lambda: config.set_memory_growth(cpu, True),
                 lambda: config.set_per_process_memory_fraction(cpu, 0.5)):
        with pytest.raises(RuntimeError, match="before the devices are first used"):
            call()


# -------------------------------------------------------------------- GPU
def _split_gpu(count, limit_mb):
    gpu = config.list_physical_devices("GPU")[0]
    config.set_logical_device_configuration(gpu, [config.LogicalDeviceConfiguration(limit_mb)] * count)
    return config.list_logical_devices("GPU")


@pytest.mark.gpu
def test_gpu_logical_devices_have_their_own_pools(fresh_devices):
    first, second = _split_gpu(2, 128)
    assert first.pool is not second.pool
    base = (first.pool.used_bytes(), second.pool.used_bytes())
    with mk.device(second):
        kept = mk.ops.ones((1000,))
        doubled = kept * 2.0
    assert second.pool.used_bytes() >= base[1] + 8000
    assert first.pool.used_bytes() == base[0]
    assert config.get_memory_info(second)["current"] == second.pool.used_bytes()
    del kept, doubled


@pytest.mark.gpu
def test_gpu_memory_growth_false_reserves_up_front(fresh_devices, monkeypatch):
    monkeypatch.delenv("TF_FORCE_GPU_ALLOW_GROWTH", raising=False)  # set by the GPU session's suite
    first, _ = _split_gpu(2, 64)
    assert first.pool.total_bytes() >= 64 * 2**20  # reserved, held by the pool's cache
    assert first.pool.used_bytes() < 2**20


@pytest.mark.gpu
def test_gpu_memory_growth_true_reserves_nothing(fresh_devices):
    gpu = config.list_physical_devices("GPU")[0]
    config.set_memory_growth(gpu, True)
    config.set_logical_device_configuration(gpu, [config.LogicalDeviceConfiguration(64)])
    (device,) = config.list_logical_devices("GPU")
    assert device.pool.total_bytes() < 2**20


@pytest.mark.gpu
def test_gpu_limit_raises_resource_exhausted_and_training_continues(fresh_devices):
    # 40 MiB: room for the weights, gradients, Adam's slots and scratch
    # (6 x 4 MiB) and a batch of 64, not for a batch of 4096.
    (device,) = _split_gpu(1, 40)
    with mk.device(device):
        with pytest.raises(ResourceExhaustedError, match="GPU:0") as caught:
            mk.ops.ones((64, 2**20))  # 256 MiB
        assert caught.value.limit == 40 * 2**20
        mk.random.seed(0)
        model = mk.Sequential([layers.Input((1024,)), layers.Dense(1024, activation="relu"), layers.Dense(10)])
        model.compile("adam", mk.losses.SparseCategoricalCrossentropy(from_logits=True))
        rng = numpy.random.default_rng(0)
        x, y = rng.normal(size=(4096, 1024)).astype("float32"), rng.integers(0, 10, 4096)
        weights = model.get_weights()
        with pytest.raises(ResourceExhaustedError):
            model.fit(x, y, batch_size=4096, epochs=1, verbose=0)
        assert all(numpy.array_equal(a, b) for a, b in zip(weights, model.get_weights()))
        history = model.fit(x[:512], y[:512], batch_size=64, epochs=2, verbose=0)
        assert history.history["loss"][-1] < history.history["loss"][0]


@pytest.mark.gpu
def test_gpu_per_process_fraction_caps_the_pool(fresh_devices):
    gpu = config.list_physical_devices("GPU")[0]
    config.set_memory_growth(gpu, True)
    config.set_logical_device_configuration(gpu, [config.LogicalDeviceConfiguration()])  # one, whatever the run
    config.set_per_process_memory_fraction(gpu, 0.1)
    (device,) = config.list_logical_devices("GPU")
    assert device.memory.limit == int(gpu.total_memory * 0.1)
    assert device.pool.get_limit() == int(gpu.total_memory * 0.1)
