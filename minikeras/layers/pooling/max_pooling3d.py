"""keras.layers.MaxPooling3D (MaxPool3D)."""
from minikeras.layers.pooling.base_pooling import _Pooling

__all__ = ["MaxPooling3D", "MaxPool3D"]


class MaxPooling3D(_Pooling):
    """Max over ``pool_size`` windows of a volume (default (2, 2, 2);
    strides default to pool_size; padding "valid" or "same")."""

    rank = 3
    _op_name = "max_pool3d"

    def __init__(self, pool_size=(2, 2, 2), strides=None, padding="valid", data_format=None, **kwargs):
        super().__init__(pool_size, strides, padding, data_format, **kwargs)


MaxPool3D = MaxPooling3D
