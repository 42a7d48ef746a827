"""keras.layers.RandomRotation."""
import numpy

from minikeras.layers.preprocessing.image_preprocessing.base_augmentation import _factor_range
from minikeras.layers.preprocessing.image_preprocessing.base_warp import _Warp

__all__ = ["RandomRotation"]


class RandomRotation(_Warp):
    """Rotate each image about its centre by a random angle.

    Args:
        factor: a fraction of a full turn: ``0.1`` draws angles in
            ``[-36, 36]`` degrees; ``(lower, upper)`` sets both ends.
        fill_mode: "reflect" (default), "wrap", "nearest" or "constant".
        interpolation: "bilinear" (default) or "nearest".
        seed, fill_value, data_format: see the module docstring.
    """

    def __init__(self, factor, fill_mode="reflect", interpolation="bilinear", seed=None, fill_value=0.0,
                 data_format=None, **kwargs):
        super().__init__(fill_mode, interpolation, seed, fill_value, data_format, **kwargs)
        self.factor = _factor_range("RandomRotation", "factor", factor)

    def _draw(self, rng, shape):
        degrees = rng.uniform(self.factor[0] * 360.0, self.factor[1] * 360.0, size=shape[0])
        return {"angle": degrees, "rotation_matrix": self._rotations(degrees, shape[1], shape[2])}

    def _matrices(self, transformation):
        return transformation["rotation_matrix"]

    @staticmethod
    def _rotations(degrees, height, width):
        batch = len(degrees)
        angle = numpy.radians(degrees)
        cos, sin = numpy.cos(angle), numpy.sin(angle)
        center_x, center_y = (width - 1) / 2.0, (height - 1) / 2.0
        zeros = numpy.zeros(batch)
        return numpy.stack([cos, -sin, center_x - center_x * cos + center_y * sin,
                            sin, cos, center_y - center_x * sin - center_y * cos, zeros, zeros], axis=1)

    def get_config(self):
        return {**super().get_config(), "factor": tuple(self.factor)}
