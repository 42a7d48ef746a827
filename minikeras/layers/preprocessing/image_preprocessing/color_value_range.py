"""The color layers' shared pieces: the value_range check, per-image selection,
and the 0-255 scale on which Solarization and RandomPosterization compute, as
Keras does (images in another ``value_range`` are mapped there and back).
"""
import numbers

import numpy

from minikeras.autograd import Tensor


def _per_image(images, flags):
    """A (batch, 1, 1, 1) boolean Tensor on the images' device."""
    return Tensor(numpy.asarray(flags, bool).reshape(-1, 1, 1, 1), device=images.device)


def _value_range(layer_name, value_range):
    if not isinstance(value_range, (tuple, list)) or len(value_range) != 2 or not all(
            isinstance(v, numbers.Real) for v in value_range):
        raise ValueError(f"The `value_range` argument should be a list of two numbers. Received: "
                         f"value_range={value_range} ({layer_name})")
    return value_range


def _to_255(images, value_range):
    low, high = value_range
    return images if (low, high) == (0, 255) else (images - low) * (255.0 / (high - low))


def _from_255(images, value_range):
    low, high = value_range
    return images if (low, high) == (0, 255) else images * ((high - low) / 255.0) + low
