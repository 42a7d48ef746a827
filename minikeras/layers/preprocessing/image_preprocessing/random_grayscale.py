"""keras.layers.RandomGrayscale."""
import numpy

from minikeras import ops
from minikeras.autograd import Tensor
from minikeras.layers.preprocessing.image_preprocessing.base_augmentation import _Augmentation
from minikeras.layers.preprocessing.image_preprocessing.color_value_range import _per_image

__all__ = ["RandomGrayscale"]

# ITU-R 601 luma, as tf.image.rgb_to_grayscale and Keras use.
_LUMA = (0.2989, 0.5870, 0.1140)


class RandomGrayscale(_Augmentation):
    """Turn each image to grayscale (kept as 3 equal channels) with probability ``factor``.

    Args:
        factor: the probability, in [0, 1] (default 0.5).
        data_format: "channels_last" (default) or "channels_first".
        seed: optional int for reproducible draws.
    """

    def __init__(self, factor=0.5, data_format=None, seed=None, **kwargs):
        super().__init__(seed=seed, data_format=data_format, **kwargs)
        if factor < 0 or factor > 1:
            raise ValueError(f"`factor` should be between 0 and 1. Received: factor={factor}")
        self.factor = factor

    def _augment(self, images, rng):
        if images.shape[-1] == 1:
            return images
        weights = Tensor(numpy.asarray(_LUMA, dtype=images.dtype), device=images.device)
        gray = ops.sum(images * weights, axis=-1, keepdims=True)
        return ops.where(_per_image(images, rng.uniform(size=images.shape[0]) < self.factor), gray, images)

    def get_config(self):
        config = super().get_config()
        config.pop("seed", None)  # not in Keras's config
        return {**config, "factor": self.factor}
