"""keras.layers.Solarization."""
import numbers

from minikeras import ops
from minikeras.layers.preprocessing.image_preprocessing.base_augmentation import _Augmentation
from minikeras.layers.preprocessing.image_preprocessing.base_image_augmentation import per_image
from minikeras.layers.preprocessing.image_preprocessing.color_value_range import _from_255, _to_255, _value_range

__all__ = ["Solarization"]


def _unit_pair(layer_name, argument, factor):
    """Keras's factor rule: a number ``f`` means ``(0, f)``; both ends in [0, 1]."""
    pair = tuple(sorted(factor)) if isinstance(factor, (tuple, list)) and len(factor) == 2 else (
        (0, factor) if isinstance(factor, numbers.Real) and not isinstance(factor, bool) else None)
    if pair is None or not all(0 <= value <= 1 for value in pair):
        raise ValueError(f"The `addition_factor` and `threshold_factor` arguments should be a number (or a list of two "
                         f"numbers) in the range [0, 1]. Received: {argument}={factor} ({layer_name})")
    return pair


class Solarization(_Augmentation):
    """Add a random amount to each image, then invert the pixels at or above
    a random threshold (``255 - x`` on the 0-255 scale).

    Args:
        addition_factor: the addition is drawn from ``(low, high * 255)``
            (a number ``f`` means ``(0, f)``; Keras scales only the upper end).
        threshold_factor: the threshold, drawn likewise (default 0: every
            pixel is inverted).
        value_range: the images' ``(low, high)`` (default (0, 255)).
        seed: optional int for reproducible draws.
    """

    def __init__(self, addition_factor=0.0, threshold_factor=0.0, value_range=(0, 255), seed=None, **kwargs):
        super().__init__(seed=seed, **kwargs)
        self.addition_factor = _unit_pair("Solarization", "addition_factor", addition_factor)
        self.threshold_factor = _unit_pair("Solarization", "threshold_factor", threshold_factor)
        self.value_range = sorted(_value_range("Solarization", value_range))

    def _augment(self, images, rng):
        return self._transform(images, self._draw(rng, images.shape))

    def _draw(self, rng, shape):
        """Keras's transformation (``additions``, ``thresholds``), as the policies replay it."""
        shape = (shape[0], 1, 1, 1)
        return {"additions": rng.uniform(self.addition_factor[0], self.addition_factor[1] * 255, size=shape),
                "thresholds": rng.uniform(self.threshold_factor[0], self.threshold_factor[1] * 255, size=shape)}

    def _transform(self, images, transformation):
        additions, thresholds = (per_image(images, transformation[key]) for key in ("additions", "thresholds"))
        shifted = ops.clip(_to_255(images, self.value_range) + additions, 0.0, 255.0)
        solarized = ops.where(ops.less(shifted, thresholds), shifted, 255.0 - shifted)
        return _from_255(solarized, self.value_range)

    def get_config(self):
        config = super().get_config()
        config.update({"value_range": self.value_range, "addition_factor": self.addition_factor,
                       "threshold_factor": self.threshold_factor})
        return config
