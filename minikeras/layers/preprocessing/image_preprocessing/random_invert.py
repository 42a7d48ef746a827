"""keras.layers.RandomInvert."""
from minikeras import ops
from minikeras.layers.preprocessing.image_preprocessing.base_augmentation import _Augmentation
from minikeras.layers.preprocessing.image_preprocessing.color_value_range import _per_image, _value_range

__all__ = ["RandomInvert"]


class RandomInvert(_Augmentation):
    """Invert each image (``value_range[1] - x``) with a probability drawn
    from ``factor`` per image.

    Args:
        factor: a probability ``p`` (range ``(0, p)``) or a ``(low, high)``
            range in [0, 1] the probability is drawn from (default 1.0).
        value_range: the images' ``(low, high)`` (default (0, 255)).
        seed: optional int for reproducible draws.
        data_format: "channels_last" (default) or "channels_first".
    """

    def __init__(self, factor=1.0, value_range=(0, 255), seed=None, data_format=None, **kwargs):
        super().__init__(seed=seed, data_format=data_format, **kwargs)
        if isinstance(factor, (tuple, list)):
            factor = (factor[0], factor[1])
        else:
            factor = (0, factor)
        if not 0 <= factor[0] <= factor[1] <= 1:
            raise ValueError(f"RandomInvert: factor must lie in [0, 1], received {factor}.")
        self.factor = factor
        self.value_range = _value_range("RandomInvert", value_range)

    def _augment(self, images, rng):
        batch = images.shape[0]
        probability = rng.uniform(self.factor[0], self.factor[1], size=batch)
        invert = rng.uniform(size=batch) < probability
        return ops.where(_per_image(images, invert), self.value_range[1] - images, images)

    def get_config(self):
        return {**super().get_config(), "factor": self.factor, "value_range": self.value_range}
