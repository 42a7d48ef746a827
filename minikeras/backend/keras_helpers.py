"""The ``keras.backend`` helpers scripts still call: ``image_data_format``,
``epsilon``, ``floatx``, ``clear_session`` and their setters.

They live here so that ``minikeras.backend.epsilon()`` reads like
``keras.backend.epsilon()``; the rest of ``minikeras.backend`` is the array
module switch. The settings are process-wide, as in Keras.
"""
import gc

_settings = {"image_data_format": "channels_last", "epsilon": 1e-7, "floatx": "float32"}
_FLOAT_TYPES = ("float16", "bfloat16", "float32", "float64")


def backend():
    """The name of the backend: ``"minikeras"`` (NumPy on CPU, CuPy on GPU)."""
    return "minikeras"


def image_data_format():
    """``"channels_last"`` (the default) or ``"channels_first"``."""
    return _settings["image_data_format"]


def set_image_data_format(data_format):
    """Set the default image layout; ``"channels_last"`` or ``"channels_first"``."""
    if data_format not in ("channels_last", "channels_first"):
        raise ValueError(f"data_format must be 'channels_last' or 'channels_first', received {data_format!r}.")
    _settings["image_data_format"] = data_format


def epsilon():
    """The fuzz factor of numeric expressions, 1e-7 by default."""
    return _settings["epsilon"]


def set_epsilon(value):
    """Set the fuzz factor returned by ``epsilon()``."""
    value = float(value)
    if not value > 0:
        raise ValueError(f"epsilon must be a positive number, received {value!r}.")
    _settings["epsilon"] = value


def floatx():
    """The default float type, ``"float32"``."""
    return _settings["floatx"]


def set_floatx(value):
    """Set the value ``floatx()`` returns (layers keep float32 unless given a dtype)."""
    if value not in _FLOAT_TYPES:
        raise ValueError(f"floatx must be one of {_FLOAT_TYPES}, received {value!r}.")
    _settings["floatx"] = value


def clear_session(free_memory=True):
    """Forget global state: default layer names start again (``dense``,
    then ``dense_1``...), and unreferenced arrays are collected; with
    ``free_memory``, memory the devices cache and do not use goes back to
    the system (GPU pools return their free blocks to the driver, what
    TensorFlow users asked of ``clear_session`` in tensorflow#17048)."""
    from minikeras.layers.naming import reset_names

    reset_names()
    if free_memory:
        gc.collect()
        _release_device_memory()


def _release_device_memory():
    """Every initialised device returns its cached, unused memory."""
    from minikeras.device import registry

    registry.release_memory()


def get_uid(prefix=""):
    """1 the first time for ``prefix``, then 2, 3...: the counter behind the
    default layer names (``get_uid("dense")`` after one Dense layer is 2);
    ``clear_session`` resets it."""
    from minikeras.layers.naming import next_uid

    return next_uid(prefix)


def is_keras_tensor(x):
    """True for a symbolic tensor of the functional API (from ``Input`` or a
    layer called on one), False for concrete arrays and Tensors."""
    from minikeras.layers.input import KerasTensor

    return isinstance(x, KerasTensor)
