"""Unique default names like Keras: dense, dense_1, dense_2, ..."""
import re
import threading

_counts = {}
_lock = threading.Lock()


def to_snake_case(name):
    """``"Conv2DTranspose" -> "conv2d_transpose"``, ``"LSTM" -> "lstm"``."""
    name = re.sub(r"(.)([A-Z][a-z]+)", r"\1_\2", name)
    name = re.sub(r"([a-z])([A-Z])", r"\1_\2", name)
    return name.lower()


def unique_name(base):
    """``base`` the first time, then ``base_1``, ``base_2``, ..."""
    with _lock:
        count = _counts.get(base, 0)
        _counts[base] = count + 1
    return base if count == 0 else f"{base}_{count}"


def reset_names():
    """Start default names from scratch (``keras.backend.clear_session``)."""
    with _lock:
        _counts.clear()


def next_uid(prefix):
    """Count one more object named ``prefix`` and return the count (1 the
    first time): Keras's ``backend.get_uid``, sharing the counter the default
    layer names use."""
    with _lock:
        _counts[prefix] = _counts.get(prefix, 0) + 1
        return _counts[prefix]
