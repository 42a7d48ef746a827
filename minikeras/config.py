"""The tf.config-like surface: devices, placement and memory settings.

Example:
    >>> import minikeras as mk
    >>> cpu = mk.config.list_physical_devices("CPU")[0]
    >>> mk.config.set_logical_device_configuration(
    ...     cpu, [mk.config.LogicalDeviceConfiguration(), mk.config.LogicalDeviceConfiguration()])
    >>> [d.name for d in mk.config.list_logical_devices("CPU")]
    ['cpu:0', 'cpu:1']
"""
from minikeras.device import (  # noqa: F401
    LogicalDeviceConfiguration,
    PhysicalDevice,
    get_log_device_placement,
    get_logical_device_configuration,
    get_memory_growth,
    get_memory_info,
    get_soft_device_placement,
    get_visible_devices,
    is_initialized,
    list_logical_devices,
    list_physical_devices,
    release_memory,
    reset_memory_stats,
    set_log_device_placement,
    set_logical_device_configuration,
    set_memory_growth,
    set_memory_limit,
    set_per_process_memory_fraction,
    set_soft_device_placement,
    set_visible_devices,
)
from minikeras import config_experimental as experimental  # noqa: E402,F401  (tf.config.experimental)
from minikeras.device.precision import (  # noqa: E402,F401  (tf.config names them at its top level too)
    enable_tensor_float_32_execution,
    tensor_float_32_execution_enabled,
)

from minikeras._support.safe_mode import enable_unsafe_deserialization  # noqa: E402,F401  (Keras 3's switch)
from minikeras._support.traceback_utils import (  # noqa: E402,F401  (Keras 3's switches)
    disable_traceback_filtering,
    enable_traceback_filtering,
    is_traceback_filtering_enabled,
)

from minikeras.dtype_policies.dtype_policy import dtype_policy, set_dtype_policy  # noqa: E402,F401  (Keras 3's global policy)


# Keras 3's keras.config names (none of them is a tf.config name: tests/test_config_names.py).
from minikeras.backend.keras_helpers import (  # noqa: E402,F401
    backend, epsilon, floatx, image_data_format, set_epsilon, set_floatx, set_image_data_format,
)
from minikeras.backend.run_limits import (  # noqa: E402,F401
    max_epochs, max_steps_per_epoch, set_max_epochs, set_max_steps_per_epoch,
)
from minikeras._support.io_utils import (  # noqa: E402,F401
    disable_interactive_logging, enable_interactive_logging, is_interactive_logging_enabled,
)
