"""Kernel tests run each case on the CPU and on the strict simulated GPU in
every run: the reference is both devices' path, and on the simulated GPU
it must cost exactly one kernel launch."""
import contextlib

import numpy
import pytest

from minikeras import backend
from minikeras.device import registry
from minikeras.testing.sim_cupy import simulation


@pytest.fixture(params=["cpu", "simulated_gpu", "gpu"])
def kernel_device(request):
    """The CPU and the simulated GPU (each kernel's reference), and a real
    GPU where one is visible (the compiled CUDA kernels, checked against
    the same expectations)."""
    if request.param == "cpu":
        return registry.get_device("cpu:0")
    if request.param == "gpu":
        if simulation.requested_count() or not backend.gpu_available():
            pytest.skip("no real GPU: the compiled kernels run where one is visible")
        return registry.get_device("gpu:0")
    return request.getfixturevalue("simulated_gpu")


@pytest.fixture
def upload(kernel_device):
    def to_device(array):
        with kernel_device.activate():
            return kernel_device.asarray(numpy.array(array, copy=True))
    return to_device


@pytest.fixture
def launches():
    return _launches


@contextlib.contextmanager
def _launches(device, expected_on_gpu):
    """Assert the work inside launches ``expected_on_gpu`` kernels on a GPU (none counted on the CPU)."""
    before = device.stats.kernel_launches
    with device.activate():
        yield
    assert device.stats.kernel_launches - before == (expected_on_gpu if device.kind == "gpu" else 0)
