"""keras.layers.MaxPooling1D (MaxPool1D)."""
from minikeras.layers.base import _LAYER_CLASSES
from minikeras.layers.pooling.base_pooling import _Pooling

__all__ = ["MaxPooling1D"]


class MaxPooling1D(_Pooling):
    """Max over windows of ``(batch, steps, channels)``.

    Args:
        pool_size: an int, default 2.
        strides: an int or None (default: pool_size).
        padding: "valid" (default) or "same".
        data_format: None or "channels_last".
        **kwargs: base Layer arguments.
    """

    rank = 1
    _op_name = "max_pool1d"

    def __init__(self, pool_size=2, strides=None, padding="valid", data_format=None, **kwargs):
        super().__init__(pool_size, strides, padding, data_format, **kwargs)


# Keras's short alias, also known by name when loading a Keras config.
MaxPool1D = MaxPooling1D
_LAYER_CLASSES.setdefault("MaxPool1D", MaxPool1D)
