"""Thread-local switch for recording the graph."""
import contextlib
import threading

_local = threading.local()


def is_grad_enabled():
    """True unless inside ``no_grad()`` in this thread."""
    return getattr(_local, "enabled", True)


@contextlib.contextmanager
def _grad_mode(enabled):
    previous = is_grad_enabled()
    _local.enabled = enabled
    try:
        yield
    finally:
        _local.enabled = previous


def no_grad():
    """Context in which ops record no graph (thread-local).

    Example:
        >>> with minikeras.no_grad():
        ...     y = model(x)   # nothing kept for backward
    """
    return _grad_mode(False)


def enable_grad():
    """Context that turns graph recording back on inside ``no_grad()``."""
    return _grad_mode(True)
