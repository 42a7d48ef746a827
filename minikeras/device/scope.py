"""``with minikeras.device("gpu:1"):`` scopes, nested and thread-local."""
import contextlib
import threading

from minikeras.device import registry

_local = threading.local()


def current_scope_device():
    """The device of the innermost active scope in this thread, or None."""
    stack = getattr(_local, "stack", None)
    return stack[-1] if stack else None


@contextlib.contextmanager
def device(name):
    """Place new tensors and ops on ``name`` inside the ``with`` block.

    Args:
        name: a device name (``"gpu:1"``, ``"/device:CPU:0"``, ...) or Device.

    Example:
        >>> with minikeras.device("cpu:0"):
        ...     t = minikeras.ops.ones((2, 2))
    """
    target = registry.get_device(name)
    stack = getattr(_local, "stack", None)
    if stack is None:
        stack = _local.stack = []
    stack.append(target)
    try:
        with target.activate():
            yield target
    finally:
        stack.pop()


def placement_device():
    """Where a new tensor goes: the scope's device, else the default device."""
    stack = getattr(_local, "stack", None)
    if stack:
        return stack[-1]
    return registry.default_device()
