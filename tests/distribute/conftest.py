"""Fixtures for the data-parallel tests: logical CPU devices."""
import pytest

from minikeras import config


@pytest.fixture
def split_cpu(fresh_devices):
    """``split_cpu(k, limit_mb=None)`` carves the CPU into k logical devices."""
    def split(count, limit_mb=None):
        # Replicas on the CPU even where GPUs (or the simulated GPU) are
        # visible: the models these tests build must live on cpu:0.
        config.set_visible_devices([], "GPU")
        cpu = config.list_physical_devices("CPU")[0]
        config.set_logical_device_configuration(cpu, [config.LogicalDeviceConfiguration(limit_mb)] * count)
        return config.list_logical_devices("CPU")

    return split

