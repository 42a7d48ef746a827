"""keras.layers.RandomColorDegeneration."""
from minikeras import ops
from minikeras.layers.preprocessing.image_preprocessing.base_color_factor import _ColorFactorLayer
from minikeras.layers.preprocessing.image_preprocessing.base_image_augmentation import per_image

__all__ = ["RandomColorDegeneration"]


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
