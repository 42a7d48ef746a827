"""Safe mode: whether loading may run code a file names.

A model file is data. A Lambda layer's function could be anything, so it is
refused in *safe mode*, which is on unless the caller opts out
(``load_model(..., safe_mode=False)`` or
``minikeras.config.enable_unsafe_deserialization()``), as in Keras 3. The
flag is read by the layers that could run or read what a config names
(``Lambda.from_config``, a lookup's vocabulary path) and by ``saving/``'s
readers, so it lives below both.
"""
import contextlib
import threading

from minikeras._support import load_budget

_unsafe_enabled = False
_local = threading.local()


class UnsafeDeserializationError(ValueError):
    """Loading would run code named by the file (a Lambda layer) and safe
    mode is on. A ValueError, as Keras raises."""


def enable_unsafe_deserialization():
    """Allow Lambda layers (and other deserialised callables) everywhere.

    Only for files you trust: a Lambda's function is taken from
    ``custom_objects`` or the registered functions, and it runs while the
    model is rebuilt. Prefer ``load_model(path, safe_mode=False)`` for one
    load.
    """
    global _unsafe_enabled
    _unsafe_enabled = True


def in_safe_mode():
    """True unless unsafe deserialisation was enabled globally, or the
    innermost :func:`safe_mode_scope` turned safe mode off."""
    if _unsafe_enabled:
        return False
    scoped = getattr(_local, "safe_mode", None)
    return True if scoped is None else scoped


def resolve_safe_mode(safe_mode):
    """Whether to refuse callables: False after the global switch, else an
    explicit ``safe_mode`` argument, else the current mode (the switch wins,
    as ``load_model``'s ``safe_mode`` defaults to True)."""
    if safe_mode is None or _unsafe_enabled:
        return in_safe_mode()
    return bool(safe_mode)


@contextlib.contextmanager
def safe_mode_scope(safe_mode):
    """Run a deserialisation with ``safe_mode`` (None: keep the current mode)."""
    previous = getattr(_local, "safe_mode", None)
    _local.safe_mode = previous if safe_mode is None else bool(safe_mode)
    try:
        yield
    finally:
        _local.safe_mode = previous


@contextlib.contextmanager
def deserialization_scope(safe_mode=True):
    """Rebuild objects from a config (``from_config``, ``layers.deserialize``,
    ``model_from_json``...), as Keras's ``SafeModeScope``: a safe mode set by
    an enclosing scope (``load_model(..., safe_mode=...)``) wins, else
    ``safe_mode``. Inside, :func:`refuses_outside_files` tells a layer that
    its config is data and may not name a file to read in safe mode."""
    previous, depth = getattr(_local, "safe_mode", None), getattr(_local, "deserializing", 0)
    _local.safe_mode = previous if previous is not None else (True if safe_mode is None else bool(safe_mode))
    _local.deserializing = depth + 1
    try:
        yield
    finally:
        _local.safe_mode, _local.deserializing = previous, depth


def refuses_outside_files():
    """Whether a config being deserialized (or a file being loaded) in safe
    mode is refused the reading of another file it names (a lookup's
    vocabulary path), as Keras refuses it; user code that constructs the
    layer itself may name any file."""
    deserializing = getattr(_local, "deserializing", 0) > 0 or load_budget.loading()
    return deserializing and in_safe_mode()


def refuse_lambda(layer_name, function_name, module_name):
    """Raise UnsafeDeserializationError for a Lambda met in safe mode."""
    raise UnsafeDeserializationError(
        f"Refused to deserialize the Lambda layer {layer_name!r} (function {function_name!r}, module "
        f"{module_name!r}): a Lambda runs arbitrary Python code, and safe_mode is on. If you trust this file, "
        "load it with safe_mode=False (load_model(path, safe_mode=False, custom_objects={name: function})) or "
        "call minikeras.config.enable_unsafe_deserialization() first."
    )
