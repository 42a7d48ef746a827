"""keras.layers.GlobalAveragePooling3D (GlobalAvgPool3D)."""
from minikeras.layers.base import _LAYER_CLASSES
from minikeras.layers.pooling.base_global_pooling import _GlobalPooling

__all__ = ["GlobalAveragePooling3D"]


class GlobalAveragePooling3D(_GlobalPooling):
    """Mean over depth, height and width.

    Args:
        data_format: None or "channels_last".
        keepdims: keep the spatial axes with size 1 (default False).
        **kwargs: base Layer arguments.
    """

    rank = 3
    _reduce_name = "mean"


# Keras's short alias, also known by name when loading a Keras config.
GlobalAvgPool3D = GlobalAveragePooling3D
_LAYER_CLASSES.setdefault("GlobalAvgPool3D", GlobalAvgPool3D)
