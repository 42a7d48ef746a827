"""keras.layers.AveragePooling2D (AvgPool2D)."""
from minikeras.layers.base import _LAYER_CLASSES
from minikeras.layers.pooling.base_pooling import _Pooling

__all__ = ["AveragePooling2D"]


class AveragePooling2D(_Pooling):
    """Average over windows of ``(batch, height, width, channels)``; with
    "same" padding a window averages its real elements only. Args as
    MaxPooling2D."""

    rank = 2
    _op_name = "avg_pool2d"

    def __init__(self, pool_size=(2, 2), strides=None, padding="valid", data_format=None, **kwargs):
        super().__init__(pool_size, strides, padding, data_format, **kwargs)


# Keras's short alias, also known by name when loading a Keras config.
AvgPool2D = AveragePooling2D
_LAYER_CLASSES.setdefault("AvgPool2D", AvgPool2D)
