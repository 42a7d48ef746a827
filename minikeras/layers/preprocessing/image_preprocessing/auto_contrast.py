"""keras.layers.AutoContrast (deterministic, always applied, as Keras's)."""
from minikeras import ops
from minikeras.layers.preprocessing.image_preprocessing.base_augmentation import _Augmentation
from minikeras.layers.preprocessing.image_preprocessing.color_value_range import _value_range
from minikeras.layers.preprocessing.image_preprocessing.image_layout import _as_channels_last_batch

__all__ = ["AutoContrast"]


class AutoContrast(_Augmentation):
    """Stretch each image's channels to the full ``value_range``: per image
    and channel, ``(x - min) * 255 / (max - min)`` on the 0-255 scale (a
    constant channel is left unchanged). Applied in training and inference.

    Args:
        value_range: the images' ``(low, high)`` (default (0, 255)).
        data_format: "channels_last" (default) or "channels_first".
    """

    def __init__(self, value_range=(0, 255), data_format=None, **kwargs):
        super().__init__(data_format=data_format, **kwargs)
        self.value_range = sorted(_value_range("AutoContrast", value_range))

    def call(self, inputs, training=None):
        inputs = ops.cast(inputs, self.dtype) if inputs.dtype != self.dtype else inputs
        images, restore = _as_channels_last_batch(self, inputs, self.data_format)
        return restore(self._augment(images, None))

    def _augment(self, images, rng):
        low_value, high_value = self.value_range
        scaled = (images - low_value) * (255.0 / (high_value - low_value))
        low = ops.min(scaled, axis=(1, 2), keepdims=True)
        high = ops.max(scaled, axis=(1, 2), keepdims=True)
        spread = high - low
        flat = ops.equal(spread, 0.0)  # Keras gets NaN there and keeps the original
        stretched = ops.clip((scaled - low) * (255.0 / ops.where(flat, 1.0, spread)), 0.0, 255.0)
        result = stretched * ((high_value - low_value) / 255.0) + low_value
        return ops.where(flat, images, result)

    def get_config(self):
        config = super().get_config()
        config.pop("seed", None)
        return {**config, "value_range": self.value_range}
