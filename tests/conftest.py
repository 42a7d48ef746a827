"""Shared fixtures: fresh device configuration, a seeded library, GPU skips."""
import numpy
import pytest

import minikeras
from minikeras import backend
from minikeras.device import registry


def pytest_collection_modifyitems(config, items):
    if backend.gpu_available():
        return
    skip = pytest.mark.skip(reason=f"GPU test skipped: {backend.gpu_unavailable_reason()}")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


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
def rng():
    return numpy.random.default_rng(0)
