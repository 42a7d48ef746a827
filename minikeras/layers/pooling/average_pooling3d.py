"""keras.layers.AveragePooling3D (AvgPool3D)."""
from minikeras.layers.pooling.base_pooling import _Pooling

__all__ = ["AveragePooling3D", "AvgPool3D"]


class AveragePooling3D(_Pooling):
    """Mean over ``pool_size`` windows of a volume (padding not counted)."""

    rank = 3
    _op_name = "avg_pool3d"

    def __init__(self, pool_size=(2, 2, 2), strides=None, padding="valid", data_format=None, **kwargs):
        super().__init__(pool_size, strides, padding, data_format, **kwargs)


AvgPool3D = AveragePooling3D
