"""Values attached to objects from outside them, dropped with the objects.

Tensors have ``__slots__`` and keep only what autograd needs; what layers
and losses want to remember about a tensor (a weight's regularizer and
constraint, a softmax output's logits) lives in a table of the module that
needs it. Keys are compared by identity, never with ``==``: a Tensor's
``==`` is elementwise. (layers/keras_mask.py keeps Keras's masks the same
way.)
"""
import weakref


class WeakIdentityTable:
    """``object -> value`` by identity; an entry goes when its object is
    garbage collected.

    Example:
        >>> table = WeakIdentityTable()
        >>> table.set(weight, "info")
        >>> table.get(weight)
        'info'
    """

    def __init__(self):
        self._entries = {}

    def set(self, obj, value):
        """Attach ``value`` to ``obj`` (None removes the entry)."""
        key = id(obj)
        entries = self._entries
        if value is None:
            entries.pop(key, None)
            return
        entries[key] = (weakref.ref(obj, lambda _, key=key: self._forget(key)), value)

    def _forget(self, key):
        # Runs when an object is freed; the entry under its id goes unless a
        # live object already holds that id again.
        entry = self._entries.get(key)
        if entry is not None and entry[0]() is None:
            self._entries.pop(key, None)

    def get(self, obj, default=None):
        """The value attached to ``obj``, or ``default``."""
        entry = self._entries.get(id(obj))
        if entry is None or entry[0]() is not obj:
            return default
        return entry[1]

    def __len__(self):
        return len(self._entries)
