"""Non-affine warps as Keras 3: RandomPerspective (a random homography per
image, through ``ops.image.perspective_transform``) and
RandomElasticTransform (smoothed random displacement fields, through
``ops.image.elastic_transform``).

RandomPerspective's draws replay Keras's exactly (corner points in, image
out). RandomElasticTransform's displacement fields are drawn inside the op
from a seed; minikeras's generator is not TensorFlow's, so its fields are
distributed as Keras's but not equal to them for the same seed.
"""
import numpy

from minikeras import ops
from minikeras.layers.preprocessing.image_preprocessing.base_image_augmentation import (ImageAugmentation, checked_value_range, keras_factor,
                                                       on_device)
from minikeras.ops.nn.affine_transform import FILL_MODES, INTERPOLATIONS

__all__ = ["RandomPerspective", "RandomElasticTransform"]


def _check_choice(layer_name, argument, value, choices):
    """Keras raises NotImplementedError for an unknown interpolation or fill mode."""
    if value not in choices:
        raise NotImplementedError(f"{layer_name}: unknown `{argument}` {value!r}. Expected one of {choices}.")
    return value


def _applied(images, flags):
    return on_device(images, flags, bool, (-1, 1, 1, 1))


class RandomPerspective(ImageAugmentation):
    """Move each image's four corners by random fractions of their
    coordinates and warp the image accordingly, with probability drawn from
    ``factor``.

    Args:
        factor: the probability's range, a number ``p`` in [0, 1] meaning
            ``(0, p)`` (default 1.0).
        scale: in [0, 1]; every corner coordinate moves by a fraction drawn
            from ``(-scale / 2, scale / 2)`` of itself (default 1.0).
        interpolation: "bilinear" (default) or "nearest".
        fill_value: the value outside the warped image (default 0).
        seed: optional int for reproducible draws.
        data_format: "channels_last" (default) or "channels_first".
    """

    def __init__(self, factor=1.0, scale=1.0, interpolation="bilinear", fill_value=0.0, seed=None, data_format=None,
                 **kwargs):
        super().__init__(seed=seed, data_format=data_format, **kwargs)
        self.factor = keras_factor("RandomPerspective", factor, (0, 1))
        if isinstance(scale, bool) or not isinstance(scale, (int, float)) or not 0.0 <= scale <= 1.0:
            raise ValueError(f"RandomPerspective: the `scale` argument should be a number in the range [0,1]. "
                             f"Received: scale={scale}")
        self.scale = scale
        self.fill_value = fill_value
        self.interpolation = _check_choice("RandomPerspective", "interpolation", interpolation, INTERPOLATIONS)

    def _draw(self, rng, shape):
        batch, height, width, _ = shape
        probability = rng.uniform(self.factor[0], self.factor[1], size=batch)
        apply = rng.uniform(size=batch) < probability
        moves = rng.uniform(-0.5 * self.scale, 0.5 * self.scale, size=(batch, 4, 2)).astype("float32")
        corners = numpy.array([[0.0, 0.0], [width - 1, 0.0], [0.0, height - 1], [width - 1, height - 1]], "float32")
        start = numpy.repeat(corners[None], batch, axis=0)
        end = numpy.where(apply[:, None, None], start + start * moves, start)
        return {"apply_perspective": apply, "start_points": start, "end_points": end, "input_shape": shape}

    def _transform(self, images, transformation):
        warped = ops.image.perspective_transform(images, transformation["start_points"],
                                                 transformation["end_points"], interpolation=self.interpolation,
                                                 fill_value=self.fill_value)
        return ops.where(_applied(images, transformation["apply_perspective"]), warped, images)

    def get_config(self):
        return {**super().get_config(), "factor": self.factor, "scale": self.scale,
                "interpolation": self.interpolation, "fill_value": self.fill_value}


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
