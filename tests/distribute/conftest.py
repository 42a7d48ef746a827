"""Fixtures for the data-parallel tests: logical CPU devices."""
import pytest

from minikeras import config


@pytest.fixture
def split_cpu(fresh_devices):
    """``split_cpu(k, limit_mb=None)`` carves the CPU into k logical devices."""
    def split(count, limit_mb=None):
        cpu = config.list_physical_devices("CPU")[0]
        config.set_logical_device_configuration(cpu, [config.LogicalDeviceConfiguration(limit_mb)] * count)
        return config.list_logical_devices("CPU")

    return split

