"""Device names, logical devices, scopes, placement, copies and memory."""
import threading

import numpy
import pytest

import minikeras as mk
from minikeras import config
from minikeras.device import parse_device_name, registry
from minikeras.testing.sim_cupy import simulation


@pytest.mark.parametrize("name, expected", [
    ("cpu", ("cpu", 0)), ("cpu:0", ("cpu", 0)), ("gpu:1", ("gpu", 1)), ("GPU:1", ("gpu", 1)),
    ("/gpu:1", ("gpu", 1)), ("/device:GPU:1", ("gpu", 1)),
    ("/job:localhost/replica:0/task:0/device:GPU:1", ("gpu", 1)), ("/device:CPU:3", ("cpu", 3)),
])
def test_device_names_parse(name, expected):
    assert parse_device_name(name) == expected


@pytest.mark.parametrize("name", ["tpu:0", "gpu:-1", "gpu:x", "", "/device:GPU:1:2", "cpu0"])
def test_malformed_device_names_raise_value_error(name):
    with pytest.raises(ValueError, match="Malformed device name"):
        parse_device_name(name)


def test_device_name_must_be_string():
    with pytest.raises(TypeError, match="must be a string"):
        parse_device_name(3)


def test_physical_devices_without_gpu():
    cpus = config.list_physical_devices("CPU")
    assert len(cpus) == 1 and cpus[0].name == "/physical_device:CPU:0" and cpus[0].device_type == "CPU"
    if not mk.backend.gpu_available() and not simulation.requested_count():
        assert config.list_physical_devices("GPU") == []
    with pytest.raises(ValueError, match="device_type"):
        config.list_physical_devices("TPU")


def test_canonical_and_short_names(fresh_devices):
    t = mk.tensor([1.0])
    assert t.device.name in ("cpu:0", "gpu:0")
    if t.device.name == "cpu:0":
        assert str(t.device) == "/device:CPU:0"


def test_logical_cpu_devices_and_scopes(fresh_devices):
    cpu = config.list_physical_devices("CPU")[0]
    config.set_logical_device_configuration(
        cpu, [config.LogicalDeviceConfiguration(), config.LogicalDeviceConfiguration()]
    )
    names = [d.name for d in config.list_logical_devices("CPU")]
    assert names == ["cpu:0", "cpu:1"]
    with mk.device("cpu:1"):
        a = mk.tensor([1.0, 2.0])
        with mk.device("/device:CPU:0"):
            b = mk.tensor([3.0, 4.0])
        c = a + b  # the op runs in the scope's device; b is copied there
    assert a.device.name == "cpu:1" and b.device.name == "cpu:0" and c.device.name == "cpu:1"
    d = b + a  # no scope: the op runs where its first input lives
    assert d.device.name == "cpu:0"
    numpy.testing.assert_allclose(d.numpy(), [4.0, 6.0])


def test_configuration_after_first_use_raises(fresh_devices):
    mk.tensor([1.0])
    cpu = config.list_physical_devices("CPU")[0]
    with pytest.raises(RuntimeError, match="before the devices are first used"):
        config.set_logical_device_configuration(cpu, [config.LogicalDeviceConfiguration()] * 2)
    with pytest.raises(RuntimeError, match="before the devices are first used"):
        config.set_visible_devices([cpu], "CPU")


def test_set_visible_devices_before_use(fresh_devices):
    cpu = config.list_physical_devices("CPU")[0]
    config.set_visible_devices([], "GPU")
    assert config.get_visible_devices("GPU") == []
    assert config.list_logical_devices("GPU") == []
    assert mk.tensor([1.0]).device.name == "cpu:0"
    with pytest.raises(TypeError, match="PhysicalDevice"):
        config.set_memory_growth("gpu:0", True)
    assert cpu in config.get_visible_devices()


def test_unknown_device_lists_existing(fresh_devices):
    with pytest.raises(RuntimeError, match=r"Unknown device 'gpu:2'.*Devices that exist: /device:CPU:0"):
        with mk.device("gpu:2"):
            pass
    with pytest.raises(ValueError, match="Malformed"):
        mk.tensor([1.0], device="gpu-two")


def test_soft_placement_falls_back_with_one_warning(fresh_devices):
    config.set_soft_device_placement(True)
    with pytest.warns(RuntimeWarning, match="soft device placement") as record:
        with mk.device("gpu:7"):
            t = mk.tensor([1.0])
        with mk.device("gpu:7"):
            pass
    assert len(record) == 1
    assert t.device is registry.default_device()


def test_log_device_placement_prints_one_line_per_op(fresh_devices, capfd):
    config.set_log_device_placement(True)
    a = mk.tensor([1.0, 2.0])
    b = a * 2.0
    (b @ a).numpy()
    config.set_log_device_placement(False)
    err = capfd.readouterr().err.strip().splitlines()
    where = registry.default_device().canonical
    assert err == [f"Executing op Mul in device {where}", f"Executing op MatMul in device {where}"]


def test_scopes_are_thread_local(fresh_devices):
    cpu = config.list_physical_devices("CPU")[0]
    config.set_logical_device_configuration(cpu, [config.LogicalDeviceConfiguration()] * 3)
    results = {}

    def worker(index):
        with mk.device(f"cpu:{index}"):
            results[index] = (mk.tensor([float(index)]) * 2.0).device.name

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results == {0: "cpu:0", 1: "cpu:1", 2: "cpu:2"}
    assert mk.tensor([1.0]).device is registry.default_device()


def test_to_copies_and_gradient_flows_back(fresh_devices):
    cpu = config.list_physical_devices("CPU")[0]
    config.set_logical_device_configuration(cpu, [config.LogicalDeviceConfiguration()] * 2)
    x = mk.tensor(numpy.array([1.0, 2.0]), device="cpu:0", requires_grad=True)
    y = x.to("cpu:1")
    assert y.device.name == "cpu:1" and y.data is not x.data
    assert x.to("cpu:0") is x
    (y * y).sum().backward()
    assert x.grad.device.name == "cpu:0"
    numpy.testing.assert_allclose(x.grad.numpy(), [2.0, 4.0])


def test_memory_accounting_counts_live_arrays(fresh_devices):
    where = registry.default_device().name
    mk.tensor([0.0])
    config.reset_memory_stats(where)
    before = config.get_memory_info(where)["current"]
    held = registry.default_device().memory.allocation_size(4000)  # CuPy's pool rounds to 512 bytes
    a = mk.tensor(numpy.zeros(1000, dtype=numpy.float32))
    assert config.get_memory_info(where)["current"] == before + held
    view = a.reshape(10, 100)  # a view: same buffer, counted once
    assert config.get_memory_info(where)["current"] == before + held
    b = a * 2.0
    assert config.get_memory_info(where)["current"] == before + 2 * held
    del a, view, b
    info = config.get_memory_info(where)
    assert info["current"] == before and info["peak"] == before + 2 * held
    config.reset_memory_stats(where)
    assert config.get_memory_info(where)["peak"] == before


def test_memory_limit_on_logical_cpu_device(fresh_devices):
    cpu = config.list_physical_devices("CPU")[0]
    config.set_logical_device_configuration(cpu, [config.LogicalDeviceConfiguration(memory_limit=1)])
    with mk.device("cpu:0"):
        small = mk.tensor(numpy.zeros(1000, dtype=numpy.float32))
        with pytest.raises(mk.errors.ResourceExhaustedError, match=r"/device:CPU:0.*asked for 4194304 bytes"):
            mk.tensor(numpy.zeros(2**20, dtype=numpy.float32))
        again = mk.tensor(numpy.zeros(1000, dtype=numpy.float32))  # the process goes on
    assert small.shape == again.shape
    with pytest.raises(ValueError, match="already in use"):
        config.set_memory_limit("cpu:0", 10)


def test_logical_device_configuration_validates():
    with pytest.raises(ValueError, match="> 0"):
        config.LogicalDeviceConfiguration(memory_limit=-5)
    with pytest.raises(TypeError, match="number of megabytes"):
        config.LogicalDeviceConfiguration(memory_limit="lots")


def test_random_seed_is_reproducible(fresh_devices):
    mk.random.seed(3)
    a = mk.random.normal((4,)).numpy()
    mk.random.seed(3)
    b = mk.random.normal((4,)).numpy()
    numpy.testing.assert_array_equal(a, b)
    assert a.dtype == numpy.float32
    with pytest.raises(ValueError, match="non-negative int"):
        mk.random.seed(-1)


def test_import_does_not_import_cupy_or_the_simulation():
    import os
    import subprocess
    import sys

    code = ("import sys, minikeras; sys.exit(1 if 'cupy' in sys.modules or any(name.startswith('minikeras.testing') "
            "for name in sys.modules) else 0)")
    for simulated in ("0", "1"):  # MINIKERAS_SIMULATED_GPU=1 loads the simulated CuPy at first device use only
        environment = dict(os.environ, MINIKERAS_SIMULATED_GPU=simulated)
        assert subprocess.run([sys.executable, "-c", code], env=environment).returncode == 0
