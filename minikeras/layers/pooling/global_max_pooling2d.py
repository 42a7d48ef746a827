"""keras.layers.GlobalMaxPooling2D (GlobalMaxPool2D)."""
from minikeras.layers.base import _LAYER_CLASSES
from minikeras.layers.pooling.base_global_pooling import _GlobalPooling

__all__ = ["GlobalMaxPooling2D"]


class GlobalMaxPooling2D(_GlobalPooling):
    """Max over height and width. Args as GlobalAveragePooling2D."""

    rank = 2
    _reduce_name = "max"


# Keras's short alias, also known by name when loading a Keras config.
GlobalMaxPool2D = GlobalMaxPooling2D
_LAYER_CLASSES.setdefault("GlobalMaxPool2D", GlobalMaxPool2D)
