"""keras.layers.GlobalMaxPooling1D (GlobalMaxPool1D)."""
from minikeras.layers.base import _LAYER_CLASSES
from minikeras.layers.pooling.base_global_pooling import _GlobalPooling

__all__ = ["GlobalMaxPooling1D"]


class GlobalMaxPooling1D(_GlobalPooling):
    """Max over the steps of ``(batch, steps, channels)``. Args as
    GlobalAveragePooling2D."""

    rank = 1
    _reduce_name = "max"


# Keras's short alias, also known by name when loading a Keras config.
GlobalMaxPool1D = GlobalMaxPooling1D
_LAYER_CLASSES.setdefault("GlobalMaxPool1D", GlobalMaxPool1D)
