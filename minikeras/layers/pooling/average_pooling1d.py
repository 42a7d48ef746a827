"""keras.layers.AveragePooling1D (AvgPool1D)."""
from minikeras.layers.base import _LAYER_CLASSES
from minikeras.layers.pooling.base_pooling import _Pooling

__all__ = ["AveragePooling1D"]


class AveragePooling1D(_Pooling):
    """Average over windows of ``(batch, steps, channels)``. Args as MaxPooling1D."""

    rank = 1
    _op_name = "avg_pool1d"

    def __init__(self, pool_size=2, strides=None, padding="valid", data_format=None, **kwargs):
        super().__init__(pool_size, strides, padding, data_format, **kwargs)


# Keras's short alias, also known by name when loading a Keras config.
AvgPool1D = AveragePooling1D
_LAYER_CLASSES.setdefault("AvgPool1D", AvgPool1D)
