"""``mk.config.experimental``: TensorFlow's ``tf.config.experimental``
switches that minikeras has (``device/precision.py``, ``device/determinism.py``).

Example:
    >>> import minikeras as mk
    >>> mk.config.experimental.tensor_float_32_execution_enabled()
    True
    >>> mk.config.experimental.enable_tensor_float_32_execution(False)  # exact float32 on GPUs
    >>> mk.config.experimental.tensor_float_32_execution_enabled()
    False
    >>> mk.config.experimental.enable_tensor_float_32_execution(True)

``enable_op_determinism()`` makes every op deterministic on GPUs
(``device/determinism.py``); as in TensorFlow, there is no way back.
"""
from minikeras.device.precision import (  # noqa: F401
    enable_tensor_float_32_execution,
    tensor_float_32_execution_enabled,
)
from minikeras.device.determinism import enable_op_determinism  # noqa: F401,E402
