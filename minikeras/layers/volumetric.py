"""The 3-D (volumetric) members of the reshaping and global pooling
families, channels-last: ZeroPadding3D, Cropping3D, UpSampling3D,
GlobalAveragePooling3D, GlobalMaxPooling3D (and Keras's short aliases).

They reuse the rank-generic code of the 1-D/2-D layers; only argument
parsing of three spatial axes is new here.
"""
from minikeras.layers.base import _LAYER_CLASSES
from minikeras.layers.conv import _int_tuple
from minikeras.layers.pooling import _GlobalPooling
from minikeras.layers.reshaping import UpSampling2D, _Cropping, _pairs, _ZeroPadding
from minikeras._support.argument_validation import is_int

__all__ = ["ZeroPadding3D", "Cropping3D", "UpSampling3D", "GlobalAveragePooling3D", "GlobalMaxPooling3D",
           "GlobalAvgPool3D", "GlobalMaxPool3D"]


def _pairs_3d(class_name, name, value):
    """An int (every side), three ints (symmetric per axis) or three pairs."""
    if isinstance(value, (tuple, list)) and len(value) == 3 and all(is_int(v) for v in value):
        value = tuple((int(v), int(v)) for v in value)
    try:
        return _pairs(class_name, name, value, 3)
    except ValueError:
        raise ValueError(f"{class_name}: {name} must be an int, a tuple of 3 ints, or a tuple of 3 pairs of ints "
                         f"((before, after) per axis), received {value!r}.") from None


class ZeroPadding3D(_ZeroPadding):
    """Pad ``(batch, depth, height, width, channels)`` with zeros.

    Args:
        padding: an int, 3 ints (symmetric per axis) or 3 (before, after)
            pairs. Default (1, 1, 1).
        data_format: None or "channels_last".
        **kwargs: base Layer arguments.
    """

    rank = 3

    def __init__(self, padding=((1, 1), (1, 1), (1, 1)), data_format=None, **kwargs):
        super().__init__(_pairs_3d("ZeroPadding3D", "padding", padding), data_format, **kwargs)

    def get_config(self):
        config = super().get_config()
        config["padding"] = [list(pair) for pair in self.padding]
        return config


class Cropping3D(_Cropping):
    """Remove borders of ``(batch, depth, height, width, channels)``.

    Args:
        cropping: an int, 3 ints (symmetric per axis) or 3 (before, after)
            pairs. Default ((1, 1), (1, 1), (1, 1)).
        data_format: None or "channels_last".
        **kwargs: base Layer arguments.
    """

    rank = 3

    def __init__(self, cropping=((1, 1), (1, 1), (1, 1)), data_format=None, **kwargs):
        super().__init__(_pairs_3d("Cropping3D", "cropping", cropping), data_format, **kwargs)

    def get_config(self):
        config = super().get_config()
        config["cropping"] = [list(pair) for pair in self.cropping]
        return config


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


class GlobalAveragePooling3D(_GlobalPooling):
    """Mean over depth, height and width.

    Args:
        data_format: None or "channels_last".
        keepdims: keep the spatial axes with size 1 (default False).
        **kwargs: base Layer arguments.
    """

    rank = 3
    _reduce_name = "mean"


class GlobalMaxPooling3D(_GlobalPooling):
    """Max over depth, height and width. Args as GlobalAveragePooling3D."""

    rank = 3
    _reduce_name = "max"


GlobalAvgPool3D, GlobalMaxPool3D = GlobalAveragePooling3D, GlobalMaxPooling3D
for _alias in ("GlobalAvgPool3D", "GlobalMaxPool3D"):
    _LAYER_CLASSES.setdefault(_alias, globals()[_alias])
del _alias
