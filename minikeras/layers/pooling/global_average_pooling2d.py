"""keras.layers.GlobalAveragePooling2D (GlobalAvgPool2D)."""
from minikeras.layers.base import _LAYER_CLASSES
from minikeras.layers.pooling.base_global_pooling import _GlobalPooling

__all__ = ["GlobalAveragePooling2D"]


class GlobalAveragePooling2D(_GlobalPooling):
    """Mean over height and width.

    Args:
        data_format: None or "channels_last".
        keepdims: keep the spatial axes with size 1 (default False).
        **kwargs: base Layer arguments.
    """

    rank = 2
    _reduce_name = "mean"


# Keras's short alias, also known by name when loading a Keras config.
GlobalAvgPool2D = GlobalAveragePooling2D
_LAYER_CLASSES.setdefault("GlobalAvgPool2D", GlobalAvgPool2D)
