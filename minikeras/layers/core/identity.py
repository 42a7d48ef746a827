"""keras.layers.Identity."""
from minikeras.layers.base import Layer

__all__ = ["Identity"]


class Identity(Layer):
    """Returns its input unchanged (a placeholder, e.g. for a removed head).

    Args:
        **kwargs: base Layer arguments.
    """

    supports_masking = True

    def call(self, inputs):
        return inputs

    def compute_output_shape(self, input_shape):
        return input_shape
