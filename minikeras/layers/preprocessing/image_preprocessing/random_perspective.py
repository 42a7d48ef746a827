"""keras.layers.RandomPerspective: a random homography per image, through
``ops.image.perspective_transform``; its draws replay Keras's exactly (corner
points in, image out).
"""
import numpy

from minikeras import ops
from minikeras.layers.preprocessing.image_preprocessing.base_image_augmentation import ImageAugmentation, keras_factor
from minikeras.layers.preprocessing.image_preprocessing.warp_checks import _applied, _check_choice
from minikeras.ops.nn.affine_transform import INTERPOLATIONS

__all__ = ["RandomPerspective"]


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
