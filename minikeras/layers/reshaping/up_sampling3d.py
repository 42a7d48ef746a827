"""keras.layers.UpSampling3D."""
from minikeras.layers.convolutional.base_conv import _int_tuple
from minikeras.layers.reshaping.up_sampling2d import UpSampling2D

__all__ = ["UpSampling3D"]


class UpSampling3D(UpSampling2D):
    """Repeat each voxel of ``(batch, depth, height, width, channels)``
    ``size`` times per axis (nearest).

    Args:
        size: an int or 3 ints. Default (2, 2, 2).
        data_format: None or "channels_last".
        **kwargs: base Layer arguments.
    """

    rank = 3

    def __init__(self, size=(2, 2, 2), data_format=None, **kwargs):
        super().__init__(size=_int_tuple("UpSampling3D", "size", size, 3), data_format=data_format, **kwargs)

    def get_config(self):
        config = super().get_config()
        del config["interpolation"]
        return config
