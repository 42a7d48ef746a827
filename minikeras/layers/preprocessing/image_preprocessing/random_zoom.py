"""keras.layers.RandomZoom."""
import numpy

from minikeras.layers.preprocessing.image_preprocessing.base_augmentation import _factor_range, _listed
from minikeras.layers.preprocessing.image_preprocessing.base_warp import _Warp

__all__ = ["RandomZoom"]


class RandomZoom(_Warp):
    """Zoom each image in or out about its centre.

    Args:
        height_factor: vertical zoom range as a fraction: the image is
            sampled with scale ``1 + u``, ``u`` drawn in the range, so
            positive values zoom out and negative ones zoom in (Keras).
        width_factor: the horizontal range; None keeps the aspect ratio
            (the vertical draw is reused).
        fill_mode, interpolation, seed, fill_value, data_format: as RandomRotation.
    """

    def __init__(self, height_factor, width_factor=None, fill_mode="reflect", interpolation="bilinear", seed=None,
                 fill_value=0.0, data_format=None, **kwargs):
        super().__init__(fill_mode, interpolation, seed, fill_value, data_format, **kwargs)
        self.height_factor = height_factor
        self.width_factor = width_factor
        self._height_range = _factor_range("RandomZoom", "height_factor", height_factor, low_inclusive=False)
        self._width_range = None if width_factor is None else \
            _factor_range("RandomZoom", "width_factor", width_factor, low_inclusive=False)

    def _transforms(self, rng, batch, height, width):
        height_zoom = rng.uniform(1.0 + self._height_range[0], 1.0 + self._height_range[1], size=batch)
        width_zoom = height_zoom if self._width_range is None else \
            rng.uniform(1.0 + self._width_range[0], 1.0 + self._width_range[1], size=batch)
        zeros = numpy.zeros(batch)
        return numpy.stack([width_zoom, zeros, (width - 1) / 2.0 * (1.0 - width_zoom),
                            zeros, height_zoom, (height - 1) / 2.0 * (1.0 - height_zoom), zeros, zeros], axis=1)

    def get_config(self):
        return {**super().get_config(), "height_factor": _listed(self.height_factor),
                "width_factor": _listed(self.width_factor)}
