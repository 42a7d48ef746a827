"""keras.layers.RandomSharpness."""
import numpy

from minikeras import ops
from minikeras.layers.preprocessing.image_preprocessing.base_color_factor import _ColorFactorLayer
from minikeras.layers.preprocessing.image_preprocessing.base_image_augmentation import per_image

__all__ = ["RandomSharpness"]


class RandomSharpness(_ColorFactorLayer):
    """Sharpen or soften each image against a 3x3 smoothed copy (PIL's
    ImageEnhance.Sharpness kernel): ``x + (1 - 2u) (smooth - x)``.

    Args:
        factor: a number ``f`` in [0, 1] draws ``u`` from ``(0, f)``, a pair
            from ``(low, high)``: 0.5 keeps the image, 0 gives the smoothed
            one, 1 sharpens.
        value_range: the images' ``(low, high)``; the result is clipped to it.
        data_format: "channels_last" (default) or "channels_first".
        seed: optional int for reproducible draws.
    """

    _BOUNDS = (0, 1)

    def _transform(self, images, transformation):
        edge, centre = 1.0 / 13.0, 5.0 / 13.0
        kernel = numpy.full((3, 3), edge)
        kernel[1, 1] = centre
        kernel = numpy.tile(kernel.reshape(3, 3, 1, 1), (1, 1, images.shape[-1], 1)).astype(images.dtype)
        smoothed = ops.depthwise_conv(images, kernel, strides=1, padding="same", data_format="channels_last")
        sharpness = per_image(images, numpy.asarray(transformation["factor"]) * 2)
        sharpened = images + (1.0 - sharpness) * (smoothed - images)
        return ops.clip(sharpened, float(self.value_range[0]), float(self.value_range[1]))
