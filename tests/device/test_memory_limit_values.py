"""Memory limits are refused at configuration when not finite (issue 12)."""
import math

import pytest

import minikeras as mk


@pytest.mark.parametrize("limit", [math.inf, math.nan, 0, -1])
def test_logical_device_configuration_refuses_non_finite_limits(limit):
    with pytest.raises(ValueError, match="memory_limit must be finite and > 0 megabytes"):
        mk.config.LogicalDeviceConfiguration(memory_limit=limit)


def test_set_memory_limit_refuses_infinity():
    with pytest.raises(ValueError, match="must be finite and >= 0 bytes, received inf"):
        mk.config.set_memory_limit("cpu:0", math.inf)
    assert mk.config.LogicalDeviceConfiguration(memory_limit=1.5).memory_limit_bytes == int(1.5 * 2**20)
