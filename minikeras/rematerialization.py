"""``keras.remat`` and ``keras.RematScope``: Keras's rematerialization
(recompute activations in the backward pass instead of keeping them).

minikeras keeps every activation its backward needs; it does not
recompute, as Keras's NumPy backend does not: ``remat(f)`` warns once and
returns ``f``, and ``RematScope`` records the mode (validated as Keras
validates it) without changing what layers compute. Results are the same
either way; only the memory Keras would save is not saved.
"""
import threading
import warnings

_VALID_MODES = ("full", "activations", "larger_than", "list_of_layers", None)
_local = threading.local()


class RematScope:
    """Keras's scope selecting which layers rematerialize.

    Args:
        mode: ``"full"``, ``"activations"``, ``"larger_than"``,
            ``"list_of_layers"`` or None.
        output_size_threshold: the size for ``"larger_than"``.
        layer_names: the layers for ``"list_of_layers"``.
    """

    def __init__(self, mode="full", output_size_threshold=1024, layer_names=None):
        if mode not in _VALID_MODES:
            raise ValueError(f"Invalid mode '{mode}'. Supported modes are: {list(_VALID_MODES)}")
        self.mode = mode
        self.output_size_threshold = output_size_threshold
        self.layer_names = list(layer_names or [])

    def __enter__(self):
        if not hasattr(_local, "scopes"):
            _local.scopes = []
        _local.scopes.append(self)
        return self

    def __exit__(self, *exc_info):
        _local.scopes.pop()


def get_current_remat_mode():
    """The innermost open RematScope (None outside any, or when its mode is None)."""
    scopes = getattr(_local, "scopes", None)
    if not scopes or scopes[-1].mode is None:
        return None
    return scopes[-1]


def remat(f):
    """``f`` itself: minikeras does not rematerialize (see the module docstring)."""
    warnings.warn("Rematerialization memory optimization is not supported by minikeras: activations are kept, "
                  "results are unchanged.", stacklevel=2)
    return f
