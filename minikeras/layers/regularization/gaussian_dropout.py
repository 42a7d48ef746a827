"""keras.layers.GaussianDropout."""
from minikeras.layers.regularization.random_layer import _RandomLayer, _check_rate

__all__ = ["GaussianDropout"]


class GaussianDropout(_RandomLayer):
    """Multiply the inputs by Gaussian noise of mean 1 and standard
    deviation ``sqrt(rate / (1 - rate))`` during training.

    Args:
        rate: the equivalent dropout rate, in [0, 1).
        seed: optional int for reproducible noise.
        **kwargs: base Layer arguments.
    """

    def __init__(self, rate, seed=None, **kwargs):
        super().__init__(seed=seed, **kwargs)
        self.rate = _check_rate("GaussianDropout", rate, upper_inclusive=False)

    def call(self, inputs, training=None):
        if not training or self.rate == 0:
            return inputs
        noise = self._standard_normal(inputs)
        with self._device_of(inputs).activate():
            noise *= (self.rate / (1.0 - self.rate)) ** 0.5
            noise += 1.0
        return inputs * noise

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)

    def get_config(self):
        return {**super().get_config(), "rate": self.rate, "seed": self.seed}
