"""Checks of device data that wait for the next host read.

Checking that a batch's class ids lie in ``[0, classes)`` reads them back
from the device: on a GPU a host synchronisation in the middle of every
training step, which then cannot run ahead of the host. Inside a training
or test step (``deferring()``) such a check is recorded instead, and the
trainer runs the recorded checks when it reads the logs (``run()``), which
synchronises anyway: one transfer per device and class count, however many
steps are pending. A recorded check also runs once ``MAX_PENDING`` have
piled up, so a loop that never reads the logs still hears of bad labels.

Meanwhile the fused cross-entropy gives a NaN loss (and no gradient
toward any class) for an out-of-range label, as TensorFlow does on a GPU;
the ValueError follows at the next read of the logs, at the latest at the
end of the epoch. Devices whose arrays live in host memory (the CPU) check
at once, as before.
"""
import contextlib
import threading

_local = threading.local()
_lock = threading.Lock()
_pending = []  # (device, array of class ids, classes, owner name, message or None)
MAX_PENDING = 64


@contextlib.contextmanager
def deferring():
    """Within this context (a training or test step, on this thread),
    :func:`defer_label_range` records checks instead of reading the device."""
    _local.depth = getattr(_local, "depth", 0) + 1
    try:
        yield
    finally:
        _local.depth -= 1


def active():
    """Whether checks are being deferred on this thread."""
    return getattr(_local, "depth", 0) > 0


def defer_label_range(name, device, labels, classes, message=None):
    """Record that ``labels`` (a device array) must lie in ``[0, classes)``.
    ``message(classes, bad)``, when given (one function for all such
    checks, so that they are read together), is the ValueError's text for an
    id ``bad`` outside that range (default: the class-label message)."""
    with _lock:
        _pending.append((device, labels, classes, name, message))
        full = len(_pending) >= MAX_PENDING
    if full:
        run()


def run():
    """Run every recorded check (one host read per device and class count).

    Raises:
        ValueError: a recorded label lies outside ``[0, classes)``.
    """
    with _lock:
        pending = _pending[:]
        _pending.clear()
    groups = {}
    for device, labels, classes, name, message in pending:
        groups.setdefault((device, classes, name, message), []).append(labels)
    for (device, classes, name, message), arrays in groups.items():
        with device.activate():
            xp = device.xp
            joined = arrays[0].reshape(-1) if len(arrays) == 1 else xp.concatenate([a.reshape(-1) for a in arrays])
            if joined.size == 0:
                continue
            low, high = device.bounds(joined)
        if (low < 0 or high >= classes) and message is not None:
            raise ValueError(message(classes, low if low < 0 else high) + " (found when the logs were read: on a GPU the "
                             "training step does not stop to read ids back)")
        if low < 0 or high >= classes:
            raise ValueError(
                f"{name}: labels must be class ids in [0, {classes}) for y_pred with {classes} classes; received "
                f"label {low if low < 0 else high} (found when the logs were read: on a GPU the training step "
                "does not stop to read labels back)."
            )
