"""The device registry: which devices exist, how they are configured.

Configuration (visible devices, logical splits, memory growth, memory
fractions) may change only before the devices are first used; the first
use (creating a tensor, listing logical devices, entering a device scope)
builds the logical devices and fixes it, as in TensorFlow.
"""
import os
import sys
import threading
import warnings

import numpy

from minikeras import backend
from minikeras.device.cpu import CpuDevice
from minikeras.device.device import Device, LogicalDeviceConfiguration, PhysicalDevice
from minikeras.device.memory import GpuMemoryStats, MemoryStats, _check_limit_value
from minikeras.device.names import parse_device_name


class _Registry:
    def __init__(self):
        self.lock = threading.RLock()
        self.physical = None  # {"cpu": [...], "gpu": [...]}
        self.visible = None  # {"cpu": [...], "gpu": [...]}, None until set
        self.logical_config = {}  # PhysicalDevice -> [LogicalDeviceConfiguration]
        self.memory_growth = {}  # PhysicalDevice -> bool
        self.memory_fraction = {}  # PhysicalDevice -> float
        self.logical = None  # {"cpu": [Device], "gpu": [Device]} once initialized
        self.soft_placement = False
        self.log_placement = False
        self.soft_warned = set()


_registry = _Registry()


def _host_memory_bytes():
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return 0


def _discover():
    if _registry.physical is not None:
        return _registry.physical
    cpus = [PhysicalDevice("/physical_device:CPU:0", "CPU", 0, _host_memory_bytes())]
    gpus = []
    cupy = backend.cupy_module()  # CuPy, or the test suite's simulated CuPy
    if cupy is not None:
        for index in range(cupy.cuda.runtime.getDeviceCount()):
            with cupy.cuda.Device(index):
                _, total = cupy.cuda.runtime.memGetInfo()
            gpus.append(PhysicalDevice(f"/physical_device:GPU:{index}", "GPU", index, total))
    _registry.physical = {"cpu": cpus, "gpu": gpus}
    return _registry.physical


def _check_kind(device_type):
    if device_type is None:
        return None
    if not isinstance(device_type, str) or device_type.lower() not in ("cpu", "gpu"):
        raise ValueError(f"device_type must be 'CPU' or 'GPU', received {device_type!r}.")
    return device_type.lower()


def list_physical_devices(device_type=None):
    """Physical devices, like ``tf.config.list_physical_devices``.

    Args:
        device_type: ``"CPU"``, ``"GPU"`` or None for all.

    Returns:
        A list of PhysicalDevice. ``[]`` for GPUs when CuPy or CUDA is missing.
    """
    kind = _check_kind(device_type)
    found = _discover()
    kinds = [kind] if kind else ["cpu", "gpu"]
    return [device for k in kinds for device in found[k]]


def _check_physical(device, what):
    if not isinstance(device, PhysicalDevice):
        raise TypeError(f"{what} expects a PhysicalDevice from list_physical_devices(), received {device!r}.")
    if device not in list_physical_devices(device.device_type):
        raise ValueError(f"{what}: unknown physical device {device.name}.")


def _check_not_initialized(what):
    if _registry.logical is not None:
        raise RuntimeError(
            f"{what} must be called before the devices are first used (creating a tensor, "
            "listing logical devices or entering a device scope); they are already initialized."
        )


def get_visible_devices(device_type=None):
    """The physical devices the library may use."""
    kind = _check_kind(device_type)
    visible = _registry.visible or _discover()
    kinds = [kind] if kind else ["cpu", "gpu"]
    return [device for k in kinds for device in visible[k]]


def set_visible_devices(devices, device_type=None):
    """Restrict the devices the library uses; before first use only.

    Args:
        devices: a PhysicalDevice or a list of them.
        device_type: only devices of this type are changed (others stay as
            they are); None changes every type that appears in ``devices``.
    """
    if isinstance(devices, PhysicalDevice):
        devices = [devices]
    devices = list(devices)
    for device in devices:
        _check_physical(device, "set_visible_devices")
    kind = _check_kind(device_type)
    with _registry.lock:
        _check_not_initialized("set_visible_devices")
        visible = dict(_registry.visible or _discover())
        kinds = [kind] if kind else sorted({d.kind for d in devices}) or ["cpu", "gpu"]
        for k in kinds:
            chosen = [d for d in devices if d.kind == k]
            if k == "cpu" and not chosen:
                raise ValueError("set_visible_devices: the CPU cannot be hidden.")
            visible[k] = chosen
        _registry.visible = visible


def set_logical_device_configuration(device, logical_devices):
    """Split a physical device into logical devices; before first use only.

    Args:
        device: a PhysicalDevice (CPU or GPU).
        logical_devices: a list of LogicalDeviceConfiguration, one per
            logical device, or None to go back to one logical device.
    """
    _check_physical(device, "set_logical_device_configuration")
    if logical_devices is not None:
        logical_devices = list(logical_devices)
        if not logical_devices or not all(isinstance(c, LogicalDeviceConfiguration) for c in logical_devices):
            raise TypeError(
                "set_logical_device_configuration expects a non-empty list of LogicalDeviceConfiguration, "
                f"received {logical_devices!r}."
            )
        if device.kind == "gpu":
            limits = [c.memory_limit_bytes for c in logical_devices]
            if any(limit is None for limit in limits) and len(limits) > 1:
                raise ValueError("Each logical GPU needs a memory_limit when a GPU is split into several.")
            if device.total_memory and None not in limits and sum(limits) > device.total_memory:
                raise ValueError(
                    f"The memory limits ({sum(limits)} bytes together) exceed {device.name}'s "
                    f"{device.total_memory} bytes."
                )
    with _registry.lock:
        _check_not_initialized("set_logical_device_configuration")
        if logical_devices is None:
            _registry.logical_config.pop(device, None)
        else:
            _registry.logical_config[device] = logical_devices


def get_logical_device_configuration(device):
    """The LogicalDeviceConfiguration list set for ``device``, or None."""
    return _registry.logical_config.get(device)


def set_memory_growth(device, enable):
    """GPU: allocate on demand (True) or reserve the device's share up front
    (False, the default as in TensorFlow, unless the environment sets
    ``TF_FORCE_GPU_ALLOW_GROWTH=true``). Before first use only."""
    _check_physical(device, "set_memory_growth")
    if not isinstance(enable, bool):
        raise TypeError(f"set_memory_growth expects True or False, received {enable!r}.")
    with _registry.lock:
        _check_not_initialized("set_memory_growth")
        _registry.memory_growth[device] = enable


def get_memory_growth(device):
    _check_physical(device, "get_memory_growth")
    return _registry.memory_growth.get(device, _growth_forced())


def set_per_process_memory_fraction(device, fraction):
    """Cap a physical device's memory at ``fraction`` of its total (0 < f <= 1),
    shared equally by its logical devices. Before first use only."""
    _check_physical(device, "set_per_process_memory_fraction")
    if isinstance(fraction, bool) or not isinstance(fraction, (int, float)):
        raise TypeError(f"The memory fraction must be a number, received {fraction!r}.")
    if not 0 < fraction <= 1:
        raise ValueError(f"The memory fraction must be in (0, 1], received {fraction!r}.")
    with _registry.lock:
        _check_not_initialized("set_per_process_memory_fraction")
        _registry.memory_fraction[device] = float(fraction)


def _limits_for(physical):
    configs = _registry.logical_config.get(physical) or [LogicalDeviceConfiguration()]
    limits = [c.memory_limit_bytes for c in configs]
    split = _split_for_tests[0] if physical.kind == "gpu" else 1
    if split > 1 and physical not in _registry.logical_config:
        configs = limits = [physical.total_memory // split] * split  # the test suite's "1x2"
    fraction = _registry.memory_fraction.get(physical)
    if fraction is not None and physical.total_memory:
        share = int(physical.total_memory * fraction / len(configs))
        limits = [share if limit is None else min(limit, share) for limit in limits]
    return limits


def _build_gpu_devices(physical, first_index):
    limits = _limits_for(physical)
    from minikeras.device.gpu import GpuDevice

    cupy = backend.cupy_module()
    devices = []
    grow = _registry.memory_growth.get(physical, _growth_forced())
    for offset, limit in enumerate(limits):
        index = first_index + offset
        with cupy.cuda.Device(physical.index):
            pool = cupy.cuda.MemoryPool()
            # Blocking: it synchronises with the legacy null stream (gpu.py's
            # race-freedom argument, rule 5).
            stream = cupy.cuda.Stream(non_blocking=False)
            memory = GpuMemoryStats(f"/device:GPU:{index}", pool, limit, physical.index, cupy)
        device = GpuDevice(index, physical, memory, cupy, pool, stream)
        if not grow:
            _reserve(device, limit, len(limits) - offset)
        devices.append(device)
    return devices


def _growth_forced():
    """``TF_FORCE_GPU_ALLOW_GROWTH=true`` makes memory growth the default, as
    in TensorFlow: several processes can then share one GPU (a test suite
    sharded with pytest-xdist), none reserving 90% of it up front."""
    return os.environ.get("TF_FORCE_GPU_ALLOW_GROWTH", "").strip().lower() == "true"


def _reserve(device, limit, sharing):
    """Reserve the device's share up front, as TensorFlow does with memory
    growth off: take it from the driver once, on the device's CUDA device
    and stream, so that the freed block sits in the arena of the stream the
    device's work uses and is reused by it. Straight from the pool, not
    through the device's allocator: the reserve is no array of the user's,
    so it is neither checked against the limit nor counted in the peak.

    CUDA's libraries allocate outside the pool (a cuBLAS handle per host
    thread that uses the device, cuFFT plans, kernel modules as they load):
    the calling thread's cuBLAS handle is made first, as TensorFlow makes
    its library handles before its allocator reserves, and
    :func:`system_headroom` stays free for the rest (the replica threads of
    a MirroredModel make their own handles later)."""
    cupy = device.xp
    with cupy.cuda.Device(device.physical.index), device.stream:
        _make_library_handles(cupy)
        free, _ = cupy.cuda.runtime.memGetInfo()
        available = max(0, free - system_headroom(free))
        reserve = limit if limit is not None else available // sharing
        reserve = min(reserve, available)
        if reserve > 0:
            block = device.pool.malloc(reserve)
            del block


def system_headroom(free):
    """Bytes a reserve leaves to the driver and CUDA's libraries: TensorFlow's
    rule for compute capability 8+ (gpu_device.cc ``MinSystemMemory``):
    225 MiB when under 2 GiB is free, else 1.5 GiB; never more than a tenth
    of what is free on a small device."""
    if free < 2 << 30:
        return min(225 << 20, free // 10)
    return 1536 << 20


def _make_library_handles(cupy):
    get_handle = getattr(getattr(cupy.cuda, "device", None), "get_cublas_handle", None)
    if get_handle is not None:
        get_handle()


def is_device_array(value):
    """True for an array of any device's array module."""
    if isinstance(value, numpy.ndarray):
        return True
    logical = _registry.logical
    if logical is None:
        return backend.is_array(value)
    return any(device.is_array(value) for device in logical["gpu"])


def owner_of(array):
    """The logical device an array lives on (the logical GPU whose
    allocator made it), or None."""
    if isinstance(array, numpy.ndarray):
        return default_cpu()
    for device in initialize()["gpu"]:
        if device.owns(array):
            return device
    # Allocated outside every device's activate() (by CuPy's default pool):
    # the first logical GPU of its physical GPU reads it.
    for device in initialize()["gpu"]:
        if device.is_array(array) and array.device.id == device.physical.index:
            return device
    return None


def default_cpu():
    """``cpu:0``."""
    return initialize()["cpu"][0]


def to_host(array):
    """A NumPy copy of an array of any device (NumPy arrays pass through)."""
    if isinstance(array, numpy.ndarray):
        return array
    owner = owner_of(array)
    if owner is None:
        return numpy.asarray(array)
    return owner.to_host(array)


def initialize():
    """Build the logical devices (idempotent). Called on first use."""
    if _registry.logical is not None:
        return _registry.logical
    with _registry.lock:
        if _registry.logical is not None:
            return _registry.logical
        cpus, gpus = [], []
        for physical in get_visible_devices("CPU"):
            for limit in _limits_for(physical):
                index = len(cpus)
                cpus.append(CpuDevice(index, physical, MemoryStats(f"/device:CPU:{index}", limit)))
        for physical in get_visible_devices("GPU"):
            gpus.extend(_build_gpu_devices(physical, len(gpus)))
        _registry.logical = {"cpu": cpus, "gpu": gpus}
        _refresh_default()
    return _registry.logical


def is_initialized():
    return _registry.logical is not None


def list_logical_devices(device_type=None):
    """Logical devices (Device objects); initializes the devices."""
    kind = _check_kind(device_type)
    logical = initialize()
    kinds = [kind] if kind else ["cpu", "gpu"]
    return [device for k in kinds for device in logical[k]]


_default = [None]
_preferred_default = [None]  # the test suite's per-device runs (tests/conftest.py)
_split_for_tests = [1]  # logical GPUs per physical GPU unless configured (tests/conftest.py: "1x2")


def _split_gpus_for_tests(count):
    """Split every physical GPU that has no logical configuration into
    ``count`` logical GPUs with an equal share of its memory, now (after the
    next reset) and after every reset; 1 undoes it. The test suite runs the
    race detector with two streams on one GPU this way (tests/conftest.py)."""
    _split_for_tests[0] = max(1, int(count))


def _refresh_default():
    logical = _registry.logical
    _default[0] = logical["gpu"][0] if logical["gpu"] else logical["cpu"][0]
    preferred = _preferred_default[0]
    if preferred is not None:
        kind, index = parse_device_name(preferred)
        if index < len(logical[kind]):
            _default[0] = logical[kind][index]


def _prefer_default_for_tests(name):
    """Make ``name`` the default device, now and after every reset, or undo
    it with None (the test suite runs each test on each device this way)."""
    _preferred_default[0] = name
    if _registry.logical is not None:
        _refresh_default()


def default_device():
    """``gpu:0`` when a GPU is visible, else ``cpu:0``."""
    device = _default[0]
    if device is None:
        initialize()
        device = _default[0]
    return device


def get_device(spec):
    """Resolve a name or Device to a logical Device.

    Unknown devices raise RuntimeError listing the devices that exist, unless
    soft placement is on: then the default device is used, with one warning.
    """
    if isinstance(spec, Device):
        return spec
    kind, index = parse_device_name(spec)
    logical = initialize()
    devices = logical[kind]
    if index < len(devices):
        return devices[index]
    fallback = default_device()
    if _registry.soft_placement:
        if spec not in _registry.soft_warned:
            _registry.soft_warned.add(spec)
            warnings.warn(
                f"Device {spec!r} does not exist; soft device placement puts the work on {fallback.canonical}.",
                RuntimeWarning,
                stacklevel=4,
            )
        return fallback
    existing = ", ".join(d.canonical for d in list_logical_devices())
    raise RuntimeError(
        f"Unknown device {spec!r}: there are {len(devices)} logical {kind.upper()} device(s). "
        f"Devices that exist: {existing}. Use config.set_soft_device_placement(True) to fall back."
    )


def set_soft_device_placement(enabled):
    """Fall back to the default device, with a warning, for unknown devices."""
    _registry.soft_placement = bool(enabled)


def get_soft_device_placement():
    return _registry.soft_placement


def set_log_device_placement(enabled):
    """Print ``Executing op NAME in device /device:X:N`` to stderr per op."""
    _registry.log_placement = bool(enabled)


def get_log_device_placement():
    return _registry.log_placement


def log_placement(op_name, device):
    print(f"Executing op {op_name} in device {device.canonical}", file=sys.stderr)


def get_memory_info(device):
    """``{"current": bytes, "peak": bytes}`` held by the library on ``device``."""
    return get_device(device).memory.info()


def reset_memory_stats(device):
    """Reset the peak of ``device`` to what it holds now."""
    get_device(device).memory.reset_peak()


def set_memory_limit(device, limit_bytes):
    """Change a logical device's limit at run time (bytes, or None for none).

    Raises ValueError when the limit is below what the device already holds.
    """
    target = get_device(device)
    if limit_bytes is not None:
        _check_limit_value(limit_bytes, target.canonical)
    target.memory.set_limit(limit_bytes)


def release_memory(device=None):
    """Return cached, unused memory to the system: a GPU pool's free blocks
    go back to the driver (``free_all_blocks``), so other processes (or a
    later ``set_logical_device_configuration`` in a fresh process) can use
    them. Arrays in use keep their memory.

    Args:
        device: a device name or Device; None for every logical device
            (does nothing before the devices are first used).
    """
    if device is None:
        logical = _registry.logical
        targets = [] if logical is None else logical["cpu"] + logical["gpu"]
    else:
        targets = [get_device(device)]
    for target in targets:
        target.release_memory()


def _reset_for_tests():
    """Forget all configuration and logical devices (tests only)."""
    global _registry
    logical = _registry.logical
    if logical is not None and any(getattr(device, "pool", None) is not None for device in logical["gpu"]):
        # A CuPy pool that is dropped keeps its cached blocks from the driver
        # for good (gpu.py's docstring): free them first, after collecting
        # the arrays that only unreachable cycles still hold (if any array
        # still holds memory: a collection costs tens of milliseconds).
        if any(device.memory.current for device in logical["gpu"]):
            import gc

            gc.collect()
        release_memory()
    fresh = _Registry()
    fresh.physical = _registry.physical
    _registry.__dict__.update(fresh.__dict__)
    _default[0] = None
