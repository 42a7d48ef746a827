"""keras.layers.GaussianNoise."""
import numbers

from minikeras.layers.regularization.random_layer import _RandomLayer

__all__ = ["GaussianNoise"]


class GaussianNoise(_RandomLayer):
    """Add zero-mean Gaussian noise of standard deviation ``stddev`` during
    training.

    Args:
        stddev: the noise's standard deviation (>= 0).
        seed: optional int for reproducible noise.
        **kwargs: base Layer arguments.
    """

    def __init__(self, stddev, seed=None, **kwargs):
        super().__init__(seed=seed, **kwargs)
        if isinstance(stddev, bool) or not isinstance(stddev, numbers.Real) or not 0 <= stddev < float("inf"):
            raise ValueError(f"GaussianNoise: stddev must be a finite number >= 0, received stddev={stddev!r}.")
        self.stddev = float(stddev)

    def call(self, inputs, training=None):
        if not training or self.stddev == 0:
            return inputs
        noise = self._standard_normal(inputs)
        with self._device_of(inputs).activate():
            noise *= self.stddev
        return inputs + noise

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)

    def get_config(self):
        return {**super().get_config(), "stddev": self.stddev, "seed": self.seed}
