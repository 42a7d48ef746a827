"""keras.layers.RandomTranslation."""
import numpy

from minikeras.layers.preprocessing.image_preprocessing.base_augmentation import _factor_range, _listed
from minikeras.layers.preprocessing.image_preprocessing.base_warp import _Warp

__all__ = ["RandomTranslation"]


class RandomTranslation(_Warp):
    """Shift each image by a random fraction of its size.

    Args:
        height_factor: vertical shift range as a fraction of the height
            (positive moves the content down).
        width_factor: horizontal shift range as a fraction of the width.
        fill_mode, interpolation, seed, fill_value, data_format: as RandomRotation.
    """

    def __init__(self, height_factor, width_factor, fill_mode="reflect", interpolation="bilinear", seed=None,
                 fill_value=0.0, data_format=None, **kwargs):
        super().__init__(fill_mode, interpolation, seed, fill_value, data_format, **kwargs)
        self.height_factor, self.width_factor = height_factor, width_factor
        self._height_range = _factor_range("RandomTranslation", "height_factor", height_factor)
        self._width_range = _factor_range("RandomTranslation", "width_factor", width_factor)

    def _draw(self, rng, shape):
        batch, height, width, _ = shape
        shift_y = rng.uniform(*self._height_range, size=batch) * height
        shift_x = rng.uniform(*self._width_range, size=batch) * width
        return {"translations": numpy.stack([shift_x, shift_y], axis=1), "input_shape": tuple(shape)}

    def _matrices(self, transformation):
        translations = numpy.asarray(transformation["translations"], "float64").reshape(-1, 2)
        ones, zeros = numpy.ones(len(translations)), numpy.zeros(len(translations))
        return numpy.stack([ones, zeros, -translations[:, 0], zeros, ones, -translations[:, 1], zeros, zeros], axis=1)

    def get_config(self):
        return {**super().get_config(), "height_factor": _listed(self.height_factor),
                "width_factor": _listed(self.width_factor)}
