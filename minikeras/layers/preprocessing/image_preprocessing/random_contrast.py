"""keras.layers.RandomContrast."""
import numpy

from minikeras import ops
from minikeras.autograd import Tensor
from minikeras.layers.preprocessing.image_preprocessing.base_augmentation import _Augmentation, _factor_range

__all__ = ["RandomContrast"]


class RandomContrast(_Augmentation):
    """Scale each image's deviation from its per-channel mean by a random
    factor, then clip to ``value_range``.

    Args:
        factor: ``f`` draws the contrast factor in ``[1 - f, 1 + f]``;
            ``(lower, upper)`` draws it in ``[1 - lower, 1 + upper]``, as
            Keras documents (Keras 3.15 itself draws ``[1, 1 + f]`` for a
            single number; minikeras follows the documentation).
        value_range: the pixel range to clip to, ``(0, 255)`` by default.
        seed: optional int for reproducible draws.
        data_format: "channels_last" (default) or "channels_first".
    """

    def __init__(self, factor, value_range=(0, 255), seed=None, data_format=None, **kwargs):
        super().__init__(seed=seed, data_format=data_format, **kwargs)
        if isinstance(factor, (list, tuple)):
            self.factor = _factor_range("RandomContrast", "factor", factor, low=0.0)
        else:
            self.factor = (_factor_range("RandomContrast", "factor", factor, low=0.0)[1],) * 2
        if not isinstance(value_range, (list, tuple)) or len(value_range) != 2 or value_range[0] >= value_range[1]:
            raise ValueError(f"RandomContrast: value_range must be (low, high) with low < high, received "
                             f"value_range={value_range!r}.")
        self.value_range = tuple(float(v) for v in value_range)

    def _augment(self, images, rng):
        return self._transform(images, self._draw(rng, images.shape))

    def _draw(self, rng, shape):
        """Keras's transformation (``contrast_factor``), as the policies replay it."""
        contrast = rng.uniform(1.0 - self.factor[0], 1.0 + self.factor[1], size=shape[0])
        return {"contrast_factor": contrast.reshape(-1, 1, 1, 1)}

    def _transform(self, images, transformation):
        contrast = Tensor(numpy.asarray(transformation["contrast_factor"]).reshape(-1, 1, 1, 1).astype(images.dtype),
                          device=images.device)
        mean = ops.mean(images, axis=(1, 2), keepdims=True)
        return ops.clip((images - mean) * contrast + mean, self.value_range[0], self.value_range[1])

    def get_config(self):
        return {**super().get_config(), "factor": list(self.factor), "value_range": list(self.value_range)}
