"""Equalization: histogram equalization per channel, as Keras 3.

Keras counts one histogram per channel over the whole batch it is given
(not per image) and maps every pixel through that channel's cumulative
histogram, on the 0-255 scale. minikeras does the same, step for step in
float32 (the two bin computations differ by rounding at bin edges, so
both are kept as Keras writes them). The lookup has no gradient.
"""
import numpy

from minikeras.autograd import Tensor
from minikeras.layers._image_augmentation_base import ImageAugmentation, checked_value_range
from minikeras.utils.argument_validation import validate_int

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
        device = images.device
        xp = device.xp
        low, high = (numpy.float32(v) for v in self.value_range)
        with device.activate():
            pixels = images.data.astype(numpy.float32)
            to_255 = numpy.float32(255.0) / (high - low)
            scaled = pixels * to_255 + (-low * to_255)
            channels = [self._equalize(xp, scaled[..., index]) for index in range(pixels.shape[-1])]
            back = (high - low) / numpy.float32(255.0)
            result = (xp.stack(channels, axis=-1) * back + low).astype(images.dtype)
        return Tensor(result, device=device)

    def _equalize(self, xp, channel):
        """One channel (0-255 scale, any shape) through its equalization table."""
        last = numpy.float32(self.bins - 1)
        bins = (channel * last / numpy.float32(255.0)).astype(numpy.int32)
        histogram = xp.bincount(xp.clip(bins, 0, self.bins - 1).reshape(-1), minlength=self.bins)
        cdf = xp.cumsum(histogram)
        cdf_min = cdf[xp.argmax(cdf > 0)]
        denominator = cdf[-1] - cdf_min
        denominator = xp.where(denominator == 0, 1, denominator)
        table = xp.clip(xp.round((cdf - cdf_min) * 255 / denominator), 0, 255)
        indices = xp.clip(channel / numpy.float32(255.0) * last, 0, last).astype(numpy.int32)
        equalized = table[indices].astype(numpy.float32)
        return xp.where(xp.count_nonzero(histogram) <= 1, channel, equalized)

    def get_config(self):
        config = super().get_config()
        config.pop("seed", None)  # not in Keras's config
        return {**config, "bins": self.bins, "value_range": self.value_range}
