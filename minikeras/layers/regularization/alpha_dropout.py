"""keras.layers.AlphaDropout: dropout that keeps SELU's mean and variance."""
import numpy

from minikeras.kernels import captured_random
from minikeras.layers.regularization.random_layer import _check_rate, _RandomLayer

__all__ = ["AlphaDropout"]

_SELU_ALPHA = 1.6732632423543772848170429916717

_SELU_SCALE = 1.0507009873554804934193349852946


class AlphaDropout(_RandomLayer):
    """Dropout for SELU networks (Klambauer et al., 2017): dropped inputs
    take SELU's negative saturation value and an affine map restores the
    mean and variance. Active only with ``training=True``.

    Args:
        rate: the drop probability, in [0, 1].
        noise_shape: the mask's shape, ``None`` entries taking the input's size.
        seed: optional int for reproducible masks.
        **kwargs: base Layer arguments.
    """

    supports_masking = True

    def __init__(self, rate, noise_shape=None, seed=None, **kwargs):
        super().__init__(seed=seed, **kwargs)
        if not 0 <= rate <= 1:
            raise ValueError(f"Invalid value received for argument `rate`. Expected a float value between 0 and 1. "
                             f"Received: rate={rate}")
        self.rate = _check_rate("AlphaDropout", rate)
        self.noise_shape = None if noise_shape is None else tuple(noise_shape)

    def call(self, inputs, training=False):
        if not training or self.rate <= 0:
            return inputs
        shape = tuple(inputs.shape) if self.noise_shape is None else tuple(
            size if want is None else want for size, want in zip(inputs.shape, self.noise_shape))
        device = self._device_of(inputs)
        from minikeras import random

        generator = self._generator(device) or random.generator(device)
        with device.activate():
            uniform = captured_random.draw(generator, device, "random", shape, numpy.float64)  # random()'s default
            kept = (uniform >= self.rate).astype(inputs.dtype)
        from minikeras.autograd import Tensor

        kept = Tensor(kept, device=device)
        saturation = -_SELU_ALPHA * _SELU_SCALE
        a = ((1 - self.rate) * (1 + self.rate * saturation**2)) ** -0.5
        b = -a * saturation * self.rate
        return a * (inputs * kept + saturation * (1.0 - kept)) + b

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)

    def get_config(self):
        noise_shape = None if self.noise_shape is None else list(self.noise_shape)
        return {**super().get_config(), "rate": self.rate, "seed": self.seed, "noise_shape": noise_shape}
