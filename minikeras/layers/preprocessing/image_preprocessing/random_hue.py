"""keras.layers.RandomHue."""
import numpy

from minikeras import ops
from minikeras.layers.preprocessing.image_preprocessing.base_color_factor import _ColorFactorLayer, _with_channel
from minikeras.layers.preprocessing.image_preprocessing.base_image_augmentation import per_image, transform_value_range

__all__ = ["RandomHue"]


class RandomHue(_ColorFactorLayer):
    """Rotate each image's HSV hue by up to half a turn.

    Args:
        factor: a number ``f`` in [0, 1] draws from ``(0, f)``, a pair from
            ``(low, high)``; the hue moves by ``±u / 2`` of a turn (the sign
            drawn per image), so 0 keeps the image and 1 shifts by half a turn.
        value_range: the images' ``(low, high)`` (mapped to [0, 1] and back).
        data_format: "channels_last" (default) or "channels_first".
        seed: optional int for reproducible draws.
    """

    _BOUNDS = (0, 1)
    _SORT_VALUE_RANGE = False

    def _draw(self, rng, shape):
        sign = numpy.where(rng.uniform(size=shape[0]) > 0.5, -1.0, 1.0)
        factor = rng.uniform(self.factor[0], self.factor[1], size=shape[0])
        return {"factor": (sign * factor * 0.5).astype("float32")}

    def _transform(self, images, transformation):
        unit = transform_value_range(images, self.value_range, (0, 1))
        hsv = ops.image.rgb_to_hsv(unit)
        hue = hsv[..., 0] + per_image(images, transformation["factor"])[..., 0]
        hue = ops.where(hue > 1.0, hue - 1.0, hue)
        hue = ops.where(hue < 0.0, hue + 1.0, hue)
        rgb = ops.clip(ops.image.hsv_to_rgb(_with_channel(hsv, 0, hue)), 0.0, 1.0)
        return transform_value_range(rgb, (0, 1), self.value_range)
