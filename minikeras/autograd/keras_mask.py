"""The mask a layer attaches to its output (Keras's ``_keras_mask``).

Keras carries a boolean mask (``True`` = keep this timestep) alongside a
tensor: Embedding(mask_zero=True) and Masking create it, layers that
support masking pass it on, and RNNs, pooling over time, attention and
Softmax read it. Tensor has fixed ``__slots__``, so instead of a slot
the masks live in this side table keyed by the tensor's id; a weak
reference drops the entry when the tensor dies, so an id that Python reuses
never inherits a stale mask.
"""
import threading
import weakref

__all__ = ["get_keras_mask", "set_keras_mask"]

_masks = {}
_lock = threading.Lock()
#: ``mask_entry(id(tensor))`` is None when no mask was ever attached to a
#: tensor of that id: a C-level look-up for hot paths, which call
#: ``get_keras_mask`` only when it is not None.
mask_entry = _masks.get


def get_keras_mask(tensor):
    """The mask attached to ``tensor``, or None."""
    entry = _masks.get(id(tensor))
    if entry is None or entry[0]() is not tensor:
        return None
    return entry[1]


def set_keras_mask(tensor, mask):
    """Attach ``mask`` to ``tensor`` (None removes it). Objects that cannot
    be weakly referenced (numbers, arrays) are left without a mask."""
    key = id(tensor)
    if mask is None:
        with _lock:
            _masks.pop(key, None)
        return
    try:
        reference = weakref.ref(tensor, lambda _, key=key: _forget(key))
    except TypeError:
        return
    with _lock:
        _masks[key] = (reference, mask)


def _forget(key):
    with _lock:
        entry = _masks.get(key)
        if entry is not None and entry[0]() is None:
            del _masks[key]
