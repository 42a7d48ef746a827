"""keras.layers.RandomBrightness."""
from minikeras import ops
from minikeras.layers.preprocessing.image_preprocessing.base_augmentation import _Augmentation, _factor_range
from minikeras.layers.preprocessing.image_preprocessing.base_image_augmentation import per_image
from minikeras.layers.preprocessing.image_preprocessing.color_value_range import _value_range

__all__ = ["RandomBrightness"]


class RandomBrightness(_Augmentation):
    """Add a random brightness offset per image: a fraction drawn from
    ``factor`` of the value range, then clip to ``value_range``.

    Args:
        factor: a number ``f`` in [-1, 1] (offsets in ``(-f, f)``) or a pair
            ``(low, high)``.
        value_range: the images' ``(low, high)`` (default (0, 255)).
        seed: optional int for reproducible draws.
    """

    def __init__(self, factor, value_range=(0, 255), seed=None, **kwargs):
        super().__init__(seed=seed, **kwargs)
        self.factor = _factor_range("RandomBrightness", "factor", factor)
        self.value_range = sorted(_value_range("RandomBrightness", value_range))

    def _augment(self, images, rng):
        return self._transform(images, self._draw(rng, images.shape))

    def _draw(self, rng, shape):
        """Keras's transformation (``rgb_delta``), as the policies replay it."""
        low, high = self.value_range
        return {"rgb_delta": rng.uniform(self.factor[0], self.factor[1], size=(shape[0], 1, 1, 1)) * (high - low)}

    def _transform(self, images, transformation):
        low, high = self.value_range
        return ops.clip(images + per_image(images, transformation["rgb_delta"]), low, high)

    def get_config(self):
        return {**super().get_config(), "factor": self.factor, "value_range": self.value_range}
