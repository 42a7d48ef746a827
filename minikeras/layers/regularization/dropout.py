"""keras.layers.Dropout."""
from minikeras import ops
from minikeras.layers.regularization.random_layer import _RandomLayer, _check_rate

__all__ = ["Dropout"]


class Dropout(_RandomLayer):
    """Randomly zero a fraction ``rate`` of the inputs during training,
    scaling the others by ``1 / (1 - rate)`` (inverted dropout).

    Args:
        rate: the fraction of inputs to drop, in [0, 1].
        noise_shape: the shape of the mask, broadcast over the input;
            e.g. ``(batch, 1, features)`` drops the same features at every
            timestep. ``None`` entries take the input's size.
        seed: optional int for reproducible masks (see module docstring).
        **kwargs: base Layer arguments.
    """

    supports_masking = True

    def __init__(self, rate, noise_shape=None, seed=None, **kwargs):
        super().__init__(seed=seed, **kwargs)
        self.rate = _check_rate("Dropout", rate)
        self.noise_shape = None if noise_shape is None else tuple(noise_shape)

    def _noise_shape(self, inputs):
        return self.noise_shape

    def call(self, inputs, training=None):
        if not training or self.rate == 0:
            return inputs
        if self.rate == 1:
            return inputs * 0.0
        generator = self._generator(self._device_of(inputs))
        return ops.dropout(inputs, self.rate, noise_shape=self._noise_shape(inputs), generator=generator)

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)

    def get_config(self):
        noise_shape = None if self.noise_shape is None else tuple(self.noise_shape)
        return {**super().get_config(), "rate": self.rate, "noise_shape": noise_shape, "seed": self.seed}
