"""Layer state produced by a step and kept only when the step succeeds.

A layer whose call changes non-trainable state (BatchNormalization's moving
statistics) hands the new value to :func:`update_state` instead of writing
it. Inside :func:`collect_state_updates` (around every training step, the
built-in one and a user's ``train_step`` alike) the variable holds the new
array for the rest of the step, so a second call in the same step (a GAN
calling its discriminator twice) starts from the first call's value, as in
Keras; its own buffer is kept aside. When the step succeeds,
:meth:`StateUpdates.commit` writes each final value into that buffer (the
variable keeps its memory, which optimizers, captured graphs and views
rely on); when it fails, :meth:`StateUpdates.discard` puts the buffer back
untouched, so a failed step (an out-of-memory retry, a failing loss) leaves
the state as it was (Keras 3's stateless steps return new non-trainable
values the same way). Outside a collection (a direct ``layer(x,
training=True)``) the value is written at once, as in Keras's eager mode.

Data parallelism: under a replica context (``minikeras/replica_context.py``)
the commit hands the changes of the variables that declare an
``aggregation`` ("mean", "sum", "only_first_replica") to the context, which
combines them across replicas, so every replica keeps the same state.

Collections are per thread: MirroredModel's replicas run their steps in
threads of their own.
"""
import contextlib
import threading

from minikeras import replica_context

__all__ = ["StateUpdates", "collect_state_updates", "update_state"]

_local = threading.local()


class StateUpdates:
    """The variables a step changed, each with the buffer it had before."""

    __slots__ = ("_originals",)

    def __init__(self):
        self._originals = {}  # id(variable) -> (variable, its own buffer before the step)

    def record(self, weight, value):
        """``weight`` holds ``value`` (a new array) until commit or discard."""
        self._originals.setdefault(id(weight), (weight, weight.data))
        weight.data = value

    def changed(self):
        """``(variable, original buffer)`` of every variable changed, in order."""
        return list(self._originals.values())

    def original(self, weight):
        """The buffer ``weight`` had before the step (itself if unchanged)."""
        entry = self._originals.get(id(weight))
        return weight.data if entry is None else entry[1]

    def commit(self):
        """Keep the step's values: combined across replicas (under a replica
        context), then written into each variable's own buffer."""
        context = replica_context.current()
        if context is not None:
            context.combine_state_changes(self)
        for weight, original in self._originals.values():
            final, weight.data = weight.data, original
            if final is not original:
                with weight.device.activate():
                    original[...] = final
        self._originals.clear()

    def discard(self):
        """Forget the step's values: every variable gets its buffer back."""
        for weight, original in self._originals.values():
            weight.data = original
        self._originals.clear()


def _stack():
    stack = getattr(_local, "stack", None)
    if stack is None:
        stack = _local.stack = []
    return stack


@contextlib.contextmanager
def collect_state_updates():
    """Collect the state updates of this block (this thread): committed
    when the block ends normally, discarded when it raises. Nested
    collections join the outermost one."""
    stack = _stack()
    if stack:
        yield stack[0]
        return
    updates = StateUpdates()
    stack.append(updates)
    try:
        try:
            yield updates
        finally:
            stack.pop()
        updates.commit()
    except BaseException:
        updates.discard()
        raise


def update_state(weight, value):
    """Set the non-trainable ``weight`` to the device array ``value``: for
    the rest of the step (kept if it succeeds), or now outside a step."""
    stack = _stack()
    if stack:
        stack[0].record(weight, value)
        return
    with weight.device.activate():
        weight.data[...] = value
