"""Colour conversions: rgb_to_grayscale, rgb_to_hsv, hsv_to_rgb.

Compositions of differentiable ops, following ``tf.image``'s formulas: grey
is ``0.2989 R + 0.5870 G + 0.1140 B`` (in the input's dtype at the end);
HSV has hue in [0, 1), computed from the largest channel as TensorFlow does.
"""

__all__ = ["rgb_to_grayscale", "rgb_to_hsv", "hsv_to_rgb"]

import numpy

from minikeras.backend.dtypes import is_float_dtype
from minikeras.ops.array.indexing import getitem
from minikeras.ops.array.joining import stack
from minikeras.ops.array.reshaping import expand_dims
from minikeras.ops.image._layout import images_last
from minikeras.ops.math.compare import where
from minikeras.ops.math.products import tensordot
from minikeras.ops.reduce import max as _max, min as _min


def _channels(x):
    return [getitem(x, (Ellipsis, i)) for i in range(x.shape[-1])]


def _check_rgb(op_name, x):
    if x.shape[-1] != 3:
        raise ValueError(f"{op_name}: expected 3 channels (RGB), received images of shape {x.shape}.")
    if not is_float_dtype(x.dtype):
        raise ValueError(f"{op_name}: invalid images dtype: expected a float dtype, received {x.dtype}.")


def rgb_to_grayscale(images, data_format=None):
    """RGB images to one grey channel (1-channel images are returned as they are)."""
    x, restore = images_last("rgb_to_grayscale", images, data_format)
    if x.shape[-1] not in (1, 3):
        raise ValueError(f"rgb_to_grayscale: invalid channel size: expected 3 (RGB) or 1 (grayscale), received "
                         f"images of shape {x.shape}.")
    if x.shape[-1] == 1:
        return restore(x)
    compute = x if is_float_dtype(x.dtype) else x.astype("float32")
    weights = numpy.array([0.2989, 0.5870, 0.1140], dtype=compute.dtype)
    grey = expand_dims(tensordot(compute, weights, axes=([3], [0])), -1)
    return restore(grey if grey.dtype == x.dtype else grey.astype(x.dtype))


def rgb_to_hsv(images, data_format=None):
    """RGB (values in [0, 1]) to HSV, all three in [0, 1]."""
    x, restore = images_last("rgb_to_hsv", images, data_format)
    _check_rgb("rgb_to_hsv", x)
    red, green, blue = _channels(x)
    value = _max(x, -1)
    chroma = value - _min(x, -1)
    safe_value = where(value > 0, value, 1)
    saturation = where(value > 0, chroma / safe_value, 0)
    safe_chroma = where(chroma > 0, chroma, 1)
    hue = where(value == red, (green - blue) / safe_chroma,
                where(value == green, (blue - red) / safe_chroma + 2, (red - green) / safe_chroma + 4))
    hue = where(chroma > 0, hue / 6, 0)
    hue = where(hue < 0, hue + 1, hue)
    return restore(stack([hue, saturation, value], -1))


def hsv_to_rgb(images, data_format=None):
    """HSV (all in [0, 1]) back to RGB."""
    x, restore = images_last("hsv_to_rgb", images, data_format)
    _check_rgb("hsv_to_rgb", x)
    hue, saturation, value = _channels(x)
    from minikeras.ops.math.compare import clip
    from minikeras.ops.math.abs_sign import abs as _abs

    # Keras (dm_pix's formula): each channel is value * (1 - s + s * clip(|(6h + k) mod 6 - 3| - 1, 0, 1)),
    # the value factored out so that an infinite value stays infinite (value - value * s would be NaN)
    sector = hue * 6

    def channel(offset):
        from minikeras.ops.math.rounding import mod

        return value * ((1.0 - saturation) + saturation * clip(_abs(mod(sector + offset, 6.0) - 3.0) - 1.0, 0.0,
                                                                 1.0))

    return restore(stack([channel(0.0), channel(4.0), channel(2.0)], -1))
