"""Equalization: histogram equalization per channel, as Keras 3.

Keras counts one histogram per channel over the whole batch it is given
(not per image) and maps every pixel through that channel's cumulative
histogram, on the 0-255 scale; ``ops.image.histogram_equalization.equalize``
does the same, step for step in float32. The lookup has no gradient.
"""
from minikeras.layers.preprocessing.image_preprocessing.base_image_augmentation import (ImageAugmentation,
                                                                                        checked_value_range)
from minikeras.ops.image.histogram_equalization import equalize
from minikeras._support.argument_validation import validate_int

__all__ = ["Equalization"]


class Equalization(ImageAugmentation):
    """Spread each channel's values over the full range by histogram
    equalization. Like Keras's, applied when ``training`` is True or not
    given, skipped with ``training=False`` (``predict``).

    Args:
        value_range: the images' ``(low, high)`` (default (0, 255)).
        bins: the number of histogram bins (default 256).
        data_format: "channels_last" (default) or "channels_first".
    """

    def __init__(self, value_range=(0, 255), bins=256, data_format=None, **kwargs):
        super().__init__(data_format=data_format, **kwargs)
        self.bins = validate_int("Equalization", "bins", bins, minimum=1)
        self.value_range = sorted(checked_value_range("Equalization", value_range))

    def _draw(self, rng, shape):
        return {}

    def _transform(self, images, transformation):
        return equalize(images, self.value_range, self.bins)

    def get_config(self):
        config = super().get_config()
        config.pop("seed", None)  # not in Keras's config
        return {**config, "bins": self.bins, "value_range": self.value_range}
