"""keras.layers.RandomElasticTransform: smoothed random displacement fields,
through ``ops.image.elastic_transform``. The fields are drawn inside the op
from a seed; minikeras's generator is not TensorFlow's, so its fields are
distributed as Keras's but not equal to them for the same seed.
"""
import numpy

from minikeras import ops
from minikeras.layers.preprocessing.image_preprocessing.base_image_augmentation import (ImageAugmentation,
                                                                                        checked_value_range,
                                                                                        keras_factor)
from minikeras.layers.preprocessing.image_preprocessing.warp_checks import _applied, _check_choice
from minikeras.ops.nn.affine_transform import FILL_MODES, INTERPOLATIONS

__all__ = ["RandomElasticTransform"]


class RandomElasticTransform(ImageAugmentation):
    """Displace pixels along smoothed random fields (Simard et al., 2003),
    with probability drawn from ``factor``.

    The strength ``s`` is drawn once per batch from ``scale``; the fields
    are scaled by ``alpha = max(height, width) * 0.1 * s`` and smoothed with
    ``sigma = min(height, width) * 0.05 * s`` (Keras's rule).

    Args:
        factor: the probability's range, a number ``p`` in [0, 1] meaning
            ``(0, p)`` (default 1.0).
        scale: the strength's range, a number in [0, 1] meaning ``(0, s)``
            (default 1.0).
        interpolation: "bilinear" (default) or "nearest".
        fill_mode: "reflect" (default), "wrap", "constant" or "nearest".
        fill_value: the value outside the image with ``fill_mode="constant"``.
        value_range: the images' ``(low, high)``; the result is clipped to it.
        seed: optional int for reproducible draws.
        data_format: "channels_last" (default) or "channels_first".
    """

    def __init__(self, factor=1.0, scale=1.0, interpolation="bilinear", fill_mode="reflect", fill_value=0.0,
                 value_range=(0, 255), seed=None, data_format=None, **kwargs):
        super().__init__(seed=seed, data_format=data_format, **kwargs)
        self.factor = keras_factor("RandomElasticTransform", factor, (0, 1))
        self.scale = keras_factor("RandomElasticTransform", scale, (0, 1), argument="scale")
        self.interpolation = _check_choice("RandomElasticTransform", "interpolation", interpolation, INTERPOLATIONS)
        self.fill_mode = _check_choice("RandomElasticTransform", "fill_mode", fill_mode, FILL_MODES)
        self.fill_value = fill_value
        self.value_range = checked_value_range("RandomElasticTransform", value_range)

    @staticmethod
    def get_elastic_transform_params(height, width, factor):
        """``(alpha, sigma)`` for images of ``height x width`` at strength ``factor``."""
        return max(height, width) * 0.1 * factor, min(height, width) * 0.05 * factor

    def _draw(self, rng, shape):
        if self.scale[1] == 0 or self.factor[1] == 0:
            return None
        probability = rng.uniform(self.factor[0], self.factor[1], size=shape[0])
        apply = rng.uniform(size=shape[0]) < probability
        strength = numpy.float32(rng.uniform(self.scale[0], self.scale[1]))
        return {"apply_transform": apply, "distortion_factor": strength, "seed": int(rng.integers(2 ** 31))}

    def _transform(self, images, transformation):
        alpha, sigma = self.get_elastic_transform_params(images.shape[1], images.shape[2],
                                                         float(numpy.asarray(transformation["distortion_factor"])))
        warped = ops.image.elastic_transform(images, alpha=alpha, sigma=sigma, interpolation=self.interpolation,
                                             fill_mode=self.fill_mode, fill_value=self.fill_value,
                                             seed=int(numpy.asarray(transformation["seed"])))
        chosen = ops.where(_applied(images, transformation["apply_transform"]), warped, images)
        return ops.clip(chosen, float(self.value_range[0]), float(self.value_range[1]))

    def get_config(self):
        return {**super().get_config(), "factor": self.factor, "scale": self.scale,
                "interpolation": self.interpolation, "fill_mode": self.fill_mode, "fill_value": self.fill_value,
                "value_range": self.value_range}
