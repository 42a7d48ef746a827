"""Which replica of a data-parallel step this thread is running, if any.

On one device there is no replica context and nothing here changes what a
training step does. ``MirroredModel`` and ``MultiWorkerMirroredModel``
(``distribute/``) run the model's own ``train_step`` on every replica, each
in its own thread, inside :func:`running_as` with a context object of
theirs. Two places of the single training step ask for it, the way
``tf.distribute``'s replica context is asked:

- the step's state updates (``layers/state_updates.py``): a non-trainable
  variable that declares an ``aggregation`` ("mean", "sum",
  "only_first_replica") gets the combination of every replica's change, via
  ``context.combine_state_changes(entries)``;
- metrics (``metrics/base.py``): a replica that only keeps the collectives
  company (``context.keeps_company``, a replica with no rows in a batch smaller
  than the number of replicas) does not update them.

Gradients are combined by the replica optimizer that ``distribute/`` puts in
place of the model's optimizers during the step, not here.

It also holds the distribution ``keras.distribution.set_distribution`` sets
(``minikeras/distribution/``): the trainer asks it, through
:func:`active_distribution`, for the data-parallel runner of a model.

This module sits beside the floors (any floor may read it) and imports nothing.
"""
import contextlib
import threading

__all__ = ["current", "running_as", "active_distribution", "set_active_distribution"]

_local = threading.local()


def current():
    """The replica context of this thread's step, or None (one device)."""
    return getattr(_local, "context", None)


@contextlib.contextmanager
def running_as(context):
    """Run the block as the replica ``context`` describes (this thread only)."""
    previous = getattr(_local, "context", None)
    _local.context = context
    try:
        yield context
    finally:
        _local.context = previous


_active = [None]  # the process-wide distribution (Keras's global state)
_scoped = threading.local()  # a distribution's scope() in this thread, over the global one


def active_distribution():
    """The distribution in effect here (a ``Distribution.scope()`` of this
    thread, else ``set_distribution``'s), or None."""
    scoped = getattr(_scoped, "stack", None)
    return scoped[-1] if scoped else _active[0]


def set_active_distribution(value):
    """Set the process-wide distribution (None: none)."""
    _active[0] = value


@contextlib.contextmanager
def distribution_scope(value):
    """``value`` is this thread's distribution inside the block."""
    stack = getattr(_scoped, "stack", None)
    if stack is None:
        stack = _scoped.stack = []
    stack.append(value)
    try:
        yield value
    finally:
        stack.pop()
