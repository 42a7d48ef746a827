"""The base of the layers that draw one color factor per image (saturation, hue,
degeneration, sharpness).
"""
from minikeras import ops
from minikeras.layers.preprocessing.image_preprocessing.base_image_augmentation import (ImageAugmentation,
                                                                                        checked_value_range,
                                                                                        keras_factor)


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
