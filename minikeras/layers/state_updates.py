"""Layer state produced by a step and applied only when the step succeeds.

A layer whose call changes non-trainable state (BatchNormalization's moving
statistics) hands the new value to :func:`update_state` instead of writing
it. Inside :func:`collect_state_updates` (the trainer's and MirroredModel's
steps) the new values are only collected, and the step applies them with
:func:`apply_state_updates` once its forward, backward and optimizer update
have all succeeded, so a failed step (an out-of-memory retry, a failing
loss) leaves the state as it was, with nothing to roll back (Keras 3's
stateless steps return the new non-trainable values the same way). Outside
one (a direct ``layer(x, training=True)``) the value is written at once, as
in Keras's eager mode.

Collections are per thread: MirroredModel's replicas run their steps in
threads of their own.
"""
import contextlib
import threading

__all__ = ["collect_state_updates", "update_state", "apply_state_updates"]

_local = threading.local()


def _stack():
    if not hasattr(_local, "stack"):
        _local.stack = []
    return _local.stack


@contextlib.contextmanager
def collect_state_updates():
    """Collect the state updates of the calls made in this block (this
    thread) instead of writing them; yields the list of ``(weight,
    new_value)`` pairs, in call order, for :func:`apply_state_updates`."""
    updates = []
    stack = _stack()
    stack.append(updates)
    try:
        yield updates
    finally:
        stack.pop()


def update_state(weight, value):
    """Set the non-trainable ``weight`` to the device array ``value``: now,
    or when the enclosing step succeeds."""
    stack = _stack()
    if stack:
        stack[-1].append((weight, value))
    else:
        apply_state_updates([(weight, value)])


def apply_state_updates(updates):
    """Write every collected ``(weight, new_value)`` in place, in order."""
    for weight, value in updates:
        with weight.device.activate():
            weight.data[...] = value
