"""keras.layers.MaxPooling2D (MaxPool2D)."""
from minikeras.layers.base import _LAYER_CLASSES
from minikeras.layers.pooling.base_pooling import _Pooling

__all__ = ["MaxPooling2D"]


class MaxPooling2D(_Pooling):
    """Max over windows of ``(batch, height, width, channels)``.

    Args:
        pool_size: an int or (height, width), default (2, 2).
        strides: an int, a pair, or None (default: pool_size).
        padding: "valid" (default) or "same" (TensorFlow's).
        data_format: None or "channels_last" (channels_first is refused).
        **kwargs: base Layer arguments.

    Example:
        >>> MaxPooling2D()(np.zeros((8, 32, 32, 16), "float32")).shape
        (8, 16, 16, 16)
    """

    rank = 2
    _op_name = "max_pool2d"

    def __init__(self, pool_size=(2, 2), strides=None, padding="valid", data_format=None, **kwargs):
        super().__init__(pool_size, strides, padding, data_format, **kwargs)


# Keras's short alias, also known by name when loading a Keras config.
MaxPool2D = MaxPooling2D
_LAYER_CLASSES.setdefault("MaxPool2D", MaxPool2D)
