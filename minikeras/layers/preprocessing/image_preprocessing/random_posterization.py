"""keras.layers.RandomPosterization."""
import numbers

import numpy

from minikeras.autograd import Tensor
from minikeras.layers.preprocessing.image_preprocessing.base_augmentation import _Augmentation
from minikeras.layers.preprocessing.image_preprocessing.color_value_range import _from_255, _to_255, _value_range

__all__ = ["RandomPosterization"]


class RandomPosterization(_Augmentation):
    """Keep only the top ``bits`` bits of every 0-255 pixel value, ``bits``
    drawn per image from ``factor``.

    Args:
        factor: bits in [1, 8]: a number ``n`` draws from ``[1, n)`` (as
            Keras's randint), a pair ``(low, high)`` from ``[low, high)``,
            equal ends use exactly that many bits.
        value_range: the images' ``(low, high)`` (default (0, 255)).
        data_format: "channels_last" (default) or "channels_first".
        seed: optional int for reproducible draws.
    """

    def __init__(self, factor, value_range=(0, 255), data_format=None, seed=None, **kwargs):
        super().__init__(seed=seed, data_format=data_format, **kwargs)
        message = (f"The `factor` argument should be a number (or a list of two numbers) in the range [1, 8]. "
                   f"Received: factor={factor}")
        if isinstance(factor, (tuple, list)):
            if len(factor) != 2 or factor[0] > 8 or factor[1] < 1:
                raise ValueError(message)
            factor = tuple(sorted(factor))
        elif isinstance(factor, numbers.Real) and not isinstance(factor, bool):
            if not 1 <= factor <= 8:
                raise ValueError(message)
            factor = (max(-abs(factor), 1), abs(factor))
        else:
            raise ValueError(message)
        self.factor = factor
        self.value_range = sorted(_value_range("RandomPosterization", value_range))

    def _augment(self, images, rng):
        return self._transform(images, self._draw(rng, images.shape))

    def _draw(self, rng, shape):
        """Keras's transformation (``shift_factor``: 8 - bits), as the policies replay it."""
        batch = shape[0]
        low, high = int(self.factor[0]), int(self.factor[1])
        bits = rng.integers(low, high, size=batch) if low != high else numpy.full(batch, low)
        return {"shift_factor": (8 - bits).astype(numpy.uint8)}

    def _transform(self, images, transformation):
        shift = numpy.asarray(transformation["shift_factor"]).reshape(-1, 1, 1, 1)
        device = images.device
        with device.activate():
            pixels = device.xp.clip(_to_255(images, self.value_range).data, 0, 255).astype(numpy.uint8)
            shift = device.asarray(shift.astype(numpy.uint8))
            kept = ((pixels >> shift) << shift).astype(images.dtype)
        return _from_255(Tensor(kept, device=device), self.value_range)

    def get_config(self):
        return {**super().get_config(), "factor": self.factor, "value_range": self.value_range}
