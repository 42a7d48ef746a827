"""Fixtures of the device tests."""
import pytest

from minikeras import backend
from minikeras.device import registry
from minikeras.device.device import PhysicalDevice

from tests.device.fake_cupy import FakeCupy


@pytest.fixture
def fake_gpus(monkeypatch, fresh_devices):
    """Two physical GPUs behind a fake CuPy; logical GPUs built by the registry."""
    fake = FakeCupy(device_count=2)
    # These tests are about the default (memory growth off); a GPU run of the
    # suite sets TF_FORCE_GPU_ALLOW_GROWTH so its processes share the GPU.
    monkeypatch.delenv("TF_FORCE_GPU_ALLOW_GROWTH", raising=False)
    monkeypatch.setattr(backend, "cupy_module", lambda: fake)
    monkeypatch.setattr(registry.simulated, "requested_count", lambda: 0)
    physical = registry._registry.physical
    registry._registry.physical = {
        "cpu": registry._discover()["cpu"],
        "gpu": [PhysicalDevice(f"/physical_device:GPU:{i}", "GPU", i, 2 << 30) for i in range(2)],
    }
    yield fake
    registry._reset_for_tests()
    registry._registry.physical = physical
