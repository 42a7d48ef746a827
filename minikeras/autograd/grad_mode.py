"""Thread-local switch for recording the graph."""
import contextlib
import threading

#: This thread's mode: ``getattr(mode, "enabled", True)`` is ``is_grad_enabled()``
#: without a Python call (Function.apply reads it once per op).
mode = threading.local()
_local = mode


def is_grad_enabled():
    """True unless inside ``no_grad()`` in this thread."""
    return getattr(_local, "enabled", True)


class _GradMode(contextlib.ContextDecorator):
    """Grad mode set to ``enabled`` inside the block (or the decorated
    function), the previous mode back after it. A class, not a generator
    context: every predict and test step enters one."""

    __slots__ = ("enabled", "previous")

    def __init__(self, enabled):
        self.enabled = enabled
        self.previous = []

    def __enter__(self):
        self.previous.append(getattr(_local, "enabled", True))
        _local.enabled = self.enabled

    def __exit__(self, *exc_info):
        _local.enabled = self.previous.pop()
        return False


def no_grad():
    """Context in which ops record no graph (thread-local).

    Example:
        >>> with minikeras.no_grad():
        ...     y = model(x)   # nothing kept for backward
    """
    return _GradMode(False)


def enable_grad():
    """Context that turns graph recording back on inside ``no_grad()``."""
    return _GradMode(True)
