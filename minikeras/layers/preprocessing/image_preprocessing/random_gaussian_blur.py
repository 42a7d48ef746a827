"""keras.layers.RandomGaussianBlur."""
import numpy

from minikeras import ops
from minikeras.layers.preprocessing.image_preprocessing.base_image_augmentation import (ImageAugmentation,
                                                                                        checked_value_range,
                                                                                        keras_factor, on_device)

__all__ = ["RandomGaussianBlur"]


class RandomGaussianBlur(ImageAugmentation):
    """Blur each image with probability drawn from ``factor``; one Gaussian
    (standard deviations drawn from ``sigma``) serves the whole batch, as Keras.

    Args:
        factor: the blur probability's range, a number ``p`` in [0, 1]
            meaning ``(0, p)`` (default 1.0).
        kernel_size: an odd int or a pair of odd ints (default 3).
        sigma: the standard deviations' range, a number ``s`` in [0, 1]
            meaning ``(0, s)`` (default 1.0).
        value_range: the images' ``(low, high)``; the result is clipped to it.
        data_format: "channels_last" (default) or "channels_first".
        seed: optional int for reproducible draws.
    """

    def __init__(self, factor=1.0, kernel_size=3, sigma=1.0, value_range=(0, 255), data_format=None, seed=None,
                 **kwargs):
        super().__init__(seed=seed, data_format=data_format, **kwargs)
        self.factor = keras_factor("RandomGaussianBlur", factor, (0, 1))
        sizes = kernel_size if isinstance(kernel_size, (tuple, list)) else (kernel_size, kernel_size)
        if len(sizes) != 2 or not all(isinstance(s, int) and not isinstance(s, bool) and s > 0 and s % 2
                                      for s in sizes):
            raise ValueError(f"RandomGaussianBlur: kernel_size must be an odd number or two odd numbers. Received: "
                             f"kernel_size={kernel_size}")
        self.kernel_size = tuple(sizes)
        self.sigma = keras_factor("RandomGaussianBlur", sigma, (0, 1), argument="sigma")
        self.value_range = checked_value_range("RandomGaussianBlur", value_range)

    def _draw(self, rng, shape):
        probability = rng.uniform(self.factor[0], self.factor[1], size=shape[0])
        apply = rng.uniform(size=shape[0]) < probability
        sigma = (rng.uniform(self.sigma[0], self.sigma[1], size=2) + 1e-6).astype("float32")
        return {"should_apply_blur": apply, "blur_factor": sigma}

    def _transform(self, images, transformation):
        sigma = tuple(float(s) for s in numpy.asarray(transformation["blur_factor"]))
        blurred = ops.image.gaussian_blur(images, kernel_size=self.kernel_size, sigma=sigma)
        apply = on_device(images, transformation["should_apply_blur"], bool, (-1, 1, 1, 1))
        return ops.clip(ops.where(apply, blurred, images), float(self.value_range[0]), float(self.value_range[1]))

    def get_config(self):
        return {**super().get_config(), "factor": self.factor, "kernel_size": self.kernel_size, "sigma": self.sigma,
                "value_range": self.value_range}
