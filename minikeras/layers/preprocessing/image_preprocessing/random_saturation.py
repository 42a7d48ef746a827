"""keras.layers.RandomSaturation."""
from minikeras import ops
from minikeras.layers.preprocessing.image_preprocessing.base_color_factor import _ColorFactorLayer, _with_channel
from minikeras.layers.preprocessing.image_preprocessing.base_image_augmentation import EPSILON, per_image

__all__ = ["RandomSaturation"]


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
