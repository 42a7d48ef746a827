"""keras.layers.GlobalMaxPooling3D (GlobalMaxPool3D)."""
from minikeras.layers.base import _LAYER_CLASSES
from minikeras.layers.pooling.base_global_pooling import _GlobalPooling

__all__ = ["GlobalMaxPooling3D"]


class GlobalMaxPooling3D(_GlobalPooling):
    """Max over depth, height and width. Args as GlobalAveragePooling3D."""

    rank = 3
    _reduce_name = "max"


# Keras's short alias, also known by name when loading a Keras config.
GlobalMaxPool3D = GlobalMaxPooling3D
_LAYER_CLASSES.setdefault("GlobalMaxPool3D", GlobalMaxPool3D)
