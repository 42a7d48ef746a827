"""keras.layers.RandomColorJitter: brightness, contrast, saturation and hue in turn."""
import numpy

from minikeras.layers.preprocessing.image_preprocessing.base_image_augmentation import (ImageAugmentation,
                                                                                        checked_value_range)
from minikeras.layers.preprocessing.image_preprocessing.random_brightness import RandomBrightness
from minikeras.layers.preprocessing.image_preprocessing.random_contrast import RandomContrast
from minikeras.layers.preprocessing.image_preprocessing.random_hue import RandomHue
from minikeras.layers.preprocessing.image_preprocessing.random_saturation import RandomSaturation

__all__ = ["RandomColorJitter"]


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
