"""Colour augmentation in HSV and against a degenerate image, as Keras 3:
RandomSaturation, RandomHue, RandomColorDegeneration, RandomSharpness and
RandomColorJitter (brightness, contrast, saturation and hue in turn).

Each draws one factor per image (see ``base_image_augmentation.py`` for the
transformation protocol and the training switch) and is differentiable with
respect to the images.
"""
import numpy

from minikeras import ops
from minikeras.layers.preprocessing.image_preprocessing.base_image_augmentation import (EPSILON, ImageAugmentation, checked_value_range,
                                                       keras_factor, per_image, transform_value_range)
from minikeras.layers.preprocessing.image_preprocessing.color_augmentation import RandomBrightness
from minikeras.layers.preprocessing.image_preprocessing.random_contrast import RandomContrast

__all__ = ["RandomSaturation", "RandomHue", "RandomColorDegeneration", "RandomSharpness", "RandomColorJitter"]


class _ColorFactorLayer(ImageAugmentation):
    """A factor drawn per image from ``factor`` (Keras's ``_set_factor`` with
    ``_BOUNDS``) and a ``value_range``."""

    _BOUNDS = (-1, 1)
    _SORT_VALUE_RANGE = True

    def __init__(self, factor, value_range=(0, 255), data_format=None, seed=None, **kwargs):
        super().__init__(seed=seed, data_format=data_format, **kwargs)
        name = type(self).__name__
        self.factor = keras_factor(name, factor, self._BOUNDS)
        value_range = checked_value_range(name, value_range)
        self.value_range = sorted(value_range) if self._SORT_VALUE_RANGE else value_range

    def _draw(self, rng, shape):
        return {"factor": rng.uniform(self.factor[0], self.factor[1], size=shape[0]).astype("float32")}

    def get_config(self):
        return {**super().get_config(), "factor": self.factor, "value_range": self.value_range}


def _with_channel(hsv, index, channel):
    """``hsv`` with channel ``index`` replaced by ``channel``."""
    channels = [hsv[..., i] for i in range(3)]
    channels[index] = channel
    return ops.stack(channels, axis=-1)


class RandomSaturation(_ColorFactorLayer):
    """Scale each image's HSV saturation.

    Args:
        factor: a number ``f`` in [0, 1] draws from ``(-f, f)``, a pair from
            ``(low, high)``; the drawn ``u`` scales saturation by
            ``u / (1 - u)``: 0.5 keeps the image, 0 (or less) makes it grey,
            values near 1 saturate it fully (Keras's rule).
        value_range: the images' ``(low, high)``; the scaled saturation is
            clipped to it, as Keras does.
        data_format: "channels_last" (default) or "channels_first".
        seed: optional int for reproducible draws.
    """

    def _draw(self, rng, shape):
        factor = rng.uniform(self.factor[0], self.factor[1], size=shape[0])
        return {"factor": (factor / (1 - factor + EPSILON)).astype("float32")}

    def _transform(self, images, transformation):
        hsv = ops.image.rgb_to_hsv(images)
        scale = per_image(images, transformation["factor"])[..., 0]
        saturation = ops.clip(hsv[..., 1] * scale, float(self.value_range[0]), float(self.value_range[1]))
        return ops.image.hsv_to_rgb(_with_channel(hsv, 1, saturation))


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


class RandomColorDegeneration(_ColorFactorLayer):
    """Blend each image towards its grayscale version: ``x + u (grey - x)``.

    Args:
        factor: a number ``f`` in [0, 1] draws ``u`` from ``(-f, f)``, a pair
            from ``(low, high)`` (negative ``u`` moves away from grey).
        value_range: the images' ``(low, high)``; the result is clipped to it.
        data_format: "channels_last" (default) or "channels_first".
        seed: optional int for reproducible draws.
    """

    def _transform(self, images, transformation):
        grey = ops.image.rgb_to_grayscale(images)
        blended = images + per_image(images, transformation["factor"]) * (grey - images)
        return ops.clip(blended, float(self.value_range[0]), float(self.value_range[1]))


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


class RandomColorJitter(ImageAugmentation):
    """Random brightness, contrast, saturation and hue, applied in that
    order, each with its own draw per image (a None factor skips it).

    Args:
        value_range: the images' ``(low, high)`` (default (0, 255)).
        brightness_factor: as RandomBrightness's ``factor``.
        contrast_factor: as RandomContrast's ``factor``.
        saturation_factor: as RandomSaturation's ``factor``.
        hue_factor: as RandomHue's ``factor``.
        seed: optional int for reproducible draws.
        data_format: "channels_last" (default) or "channels_first".
    """

    def __init__(self, value_range=(0, 255), brightness_factor=None, contrast_factor=None, saturation_factor=None,
                 hue_factor=None, seed=None, data_format=None, **kwargs):
        super().__init__(seed=seed, data_format=data_format, **kwargs)
        self.value_range = checked_value_range("RandomColorJitter", value_range)
        self.brightness_factor, self.contrast_factor = brightness_factor, contrast_factor
        self.saturation_factor, self.hue_factor = saturation_factor, hue_factor
        steps = ((RandomBrightness, brightness_factor), (RandomContrast, contrast_factor),
                 (RandomSaturation, saturation_factor), (RandomHue, hue_factor))
        self._steps = [layer_class(factor=factor, value_range=self.value_range, dtype=self.dtype_policy)
                       for layer_class, factor in steps if factor is not None]

    def _draw(self, rng, shape):
        # each step draws when it runs (as Keras's jitter does), from a generator seeded here,
        # so the transformation replays
        return {"seed": int(rng.integers(2 ** 63))}

    def _transform(self, images, transformation):
        rng = numpy.random.default_rng(int(numpy.asarray(transformation["seed"])))
        for step in self._steps:
            images = step._augment(images, rng)
        return images

    def get_config(self):
        return {**super().get_config(), "value_range": self.value_range,
                "brightness_factor": self.brightness_factor, "contrast_factor": self.contrast_factor,
                "saturation_factor": self.saturation_factor, "hue_factor": self.hue_factor}
