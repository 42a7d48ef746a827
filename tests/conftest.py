"""Shared fixtures: fresh device configuration, a seeded library, GPU skips,
and every test on every device.

Every device: the tests of the library's numerical core (ops, autograd,
layers, losses, metrics, optimizers, models, saving, callbacks, and the
top-level modules) run once per device present, as Chainer's
``inject_backend_tests`` does: ``cpu:0`` always, and each visible real GPU
(``gpu:N`` in the test id), with that device as the default device. With
``MINIKERAS_SIMULATED_GPU=1`` (CI's second run) they run on ``gpu:0`` of the
simulated CuPy (minikeras.testing.sim_cupy, which the registry is handed in
place of ``cupy``: the real GpuDevice runs on it) instead, split into two
logical GPUs for the device, distribute, models and saving tests (the race
detector's second stream).
``--device-kind gpu`` (or ``cpu``) keeps one half.

CPU-only tests (op threads, BLAS threads, mallopt) carry
``@pytest.mark.cpu_only(reason=...)`` and are skipped, with that reason,
when the default device is a GPU (the simulated-GPU run).
"""
import os
import pathlib

import numpy
import pytest

import minikeras
from minikeras import backend
from minikeras.device import registry
from minikeras.testing.sim_cupy import simulation

_PER_DEVICE = ("ops", "autograd", "layers", "losses", "metrics", "optimizers", "models", "saving", "callbacks",
               "mixed_precision", "quantizers")
_TESTS = pathlib.Path(__file__).parent


def pytest_addoption(parser):
    parser.addoption("--device-kind", choices=("cpu", "gpu"), default=None,
                     help="run the per-device tests on devices of this kind only")


def pytest_configure(config):
    registry._split_gpus_for_tests(simulation.logical_split())  # MINIKERAS_SIMULATED_GPU=NxM
    # GPU memory grows on demand, as in the GPU session's run of the suite: no
    # test process reserves most of a GPU up front, and a pool dropped while an
    # array still lives in it (a failed test's traceback) leaks no reserve. The
    # tests of the default policy unset it (tests/device/conftest.py).
    os.environ.setdefault("TF_FORCE_GPU_ALLOW_GROWTH", "true")
    # The suite checks GPU results against the CPU's and float64 finite
    # differences at float32 tolerances, so it runs with TF32 off, as
    # PyTorch's suite does; TF32's own tests turn it on (tests/device/test_tensor_cores.py).
    # The worker processes tests launch (MPI, scripts) inherit NVIDIA's override.
    minikeras.config.experimental.enable_tensor_float_32_execution(False)
    os.environ["NVIDIA_TF32_OVERRIDE"] = "0"


def _devices_under_test(config):
    if simulation.requested_count():
        names = ["gpu:0"]
    else:
        names = ["cpu:0"]
        cupy = backend.cupy_module() if backend.gpu_available() else None
        if cupy is not None:
            names += [f"gpu:{index}" for index in range(cupy.cuda.runtime.getDeviceCount())]
    kind = config.getoption("--device-kind")
    return [name for name in names if kind is None or name.startswith(kind)]


def _runs_per_device(path):
    relative = pathlib.Path(path).relative_to(_TESTS)
    return len(relative.parts) == 1 or relative.parts[0] in _PER_DEVICE


def pytest_generate_tests(metafunc):
    if _runs_per_device(metafunc.definition.fspath):
        metafunc.parametrize("_on_device", _devices_under_test(metafunc.config), indirect=True)


# The simulated-GPU run (MINIKERAS_SIMULATED_GPU=1) splits its GPU into two
# logical GPUs for these directories ("1x2"): two streams, so the race
# detector (minikeras/testing/sim_cupy/_races.py) checks what crosses between them.
_TWO_LOGICAL_GPUS = ("device", "distribute", "models", "saving")


@pytest.fixture(autouse=True)
def _simulated_streams(request):
    """Two logical simulated GPUs for the tests of _TWO_LOGICAL_GPUS."""
    if os.environ.get(simulation.ENVIRONMENT_VARIABLE, "").strip() != "1":
        yield
        return
    relative = pathlib.Path(str(request.node.fspath)).relative_to(_TESTS)
    split = 2 if len(relative.parts) > 1 and relative.parts[0] in _TWO_LOGICAL_GPUS else 1
    registry._split_gpus_for_tests(split)
    if registry.is_initialized() and len(registry.list_logical_devices("GPU")) != split:
        registry._reset_for_tests()
    yield


@pytest.fixture(autouse=True)
def _on_device(request):
    """The device this run of a per-device test uses as the default device
    (None for the other tests)."""
    name = getattr(request, "param", None)
    registry._prefer_default_for_tests(name)
    yield name
    registry._prefer_default_for_tests(None)


def pytest_collection_modifyitems(config, items):
    on_gpu = simulation.requested_count() > 0
    if not backend.gpu_available():
        skip = pytest.mark.skip(reason=f"GPU test skipped: {backend.gpu_unavailable_reason()}")
        skip_cuda = pytest.mark.skip(reason="needs real CUDA (compiled kernels, CuPy's own results), not the "
                                            "simulated CuPy")
        for item in items:
            if "gpu" in item.keywords and not on_gpu:
                item.add_marker(skip)
            elif "cuda" in item.keywords:
                item.add_marker(skip_cuda if on_gpu else skip)
    for item in items:
        marker = item.get_closest_marker("cpu_only")
        if marker is None:
            continue
        reason = marker.kwargs.get("reason") or (marker.args[0] if marker.args else "CPU-only test")
        callspec = getattr(item, "callspec", None)
        device = callspec.params.get("_on_device") if callspec is not None else None
        if on_gpu or (device is not None and device.startswith("gpu")):
            item.add_marker(pytest.mark.skip(reason=f"CPU only: {reason}"))


@pytest.fixture(autouse=True)
def _seeded():
    minikeras.random.seed(1234)
    yield


@pytest.fixture
def fresh_devices():
    """Forget device configuration before and after the test, so a test may
    configure logical devices (which is allowed only before first use)."""
    registry._reset_for_tests()
    yield
    registry.set_log_device_placement(False)
    registry.set_soft_device_placement(False)
    registry._reset_for_tests()


@pytest.fixture
def simulated_gpus(monkeypatch, fresh_devices):
    """``simulated_gpus("1x2")``: the logical GPUs of that
    ``MINIKERAS_SIMULATED_GPU`` value ("2": two simulated GPUs, "1x2": one
    split in two), in any run; ``gpu:0`` becomes the default device."""
    physical, split = registry._registry.physical, registry._split_for_tests[0]

    def use(value):
        registry._prefer_default_for_tests(None)  # whatever device this test runs for
        monkeypatch.setenv(simulation.ENVIRONMENT_VARIABLE, value)
        registry._split_gpus_for_tests(simulation.logical_split())
        registry._registry.physical = None
        registry._reset_for_tests()
        return registry.list_logical_devices("GPU")

    yield use
    registry._reset_for_tests()
    monkeypatch.undo()
    registry._registry.physical = physical
    registry._split_gpus_for_tests(split)


@pytest.fixture
def simulated_gpu(simulated_gpus):
    """The strict simulated GPU as the default device (``gpu:0``), in any run."""
    return simulated_gpus("1")[0]


@pytest.fixture
def device():
    """The default device of this run of the test (a Device)."""
    return registry.default_device()


@pytest.fixture
def rng():
    return numpy.random.default_rng(0)
