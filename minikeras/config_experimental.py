"""``mk.config.experimental``: TensorFlow's ``tf.config.experimental``
switches that minikeras has (``device/precision.py``).

Example:
    >>> import minikeras as mk
    >>> mk.config.experimental.tensor_float_32_execution_enabled()
    True
    >>> mk.config.experimental.enable_tensor_float_32_execution(False)  # exact float32 on GPUs
    >>> mk.config.experimental.tensor_float_32_execution_enabled()
    False
    >>> mk.config.experimental.enable_tensor_float_32_execution(True)
"""
from minikeras.device.precision import (  # noqa: F401
    enable_tensor_float_32_execution,
    tensor_float_32_execution_enabled,
)
