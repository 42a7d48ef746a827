"""Devices, placement, and per-device memory (the tf.config surface).

The GPU device (``gpu.py`` with cuBLAS, cuDNN, graphs and scatter) loads when
a GPU is first built (``registry._build_gpu_devices``) or ``GpuDevice`` is
first named here, so a CPU-only process never imports it.
"""
from minikeras.device.cpu import CpuDevice, replicas_share_cores
from minikeras.device.device import Device, DeviceStats, LogicalDeviceConfiguration, PhysicalDevice
from minikeras.device.names import canonical_name, parse_device_name
from minikeras.device.registry import (
    default_device,
    get_device,
    get_log_device_placement,
    get_logical_device_configuration,
    get_memory_growth,
    get_memory_info,
    get_soft_device_placement,
    get_visible_devices,
    initialize,
    is_initialized,
    list_logical_devices,
    list_physical_devices,
    owner_of,
    release_memory,
    reset_memory_stats,
    set_log_device_placement,
    set_logical_device_configuration,
    set_memory_growth,
    set_memory_limit,
    set_per_process_memory_fraction,
    set_soft_device_placement,
    set_visible_devices,
    to_host,
)
from minikeras.device.scope import current_scope_device, device, placement_device


def __getattr__(name):
    # PEP 562: GpuDevice on first use (the import machinery still finds the submodules themselves).
    if name == "GpuDevice":
        from minikeras.device.gpu import GpuDevice

        return GpuDevice
    raise AttributeError(f"module 'minikeras.device' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | {"GpuDevice"})
