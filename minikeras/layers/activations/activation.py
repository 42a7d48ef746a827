"""keras.layers.Activation: any ``keras.activations`` function as a layer."""
from minikeras import activations
from minikeras.layers.base import Layer
from minikeras.layers.core.dense import _apply_activation, _float_input

__all__ = ["Activation"]


# ------------------------------------------------------------- Activation
class Activation(Layer):
    """Apply an activation function to the input.

    Args:
        activation: a name ("relu", "softmax", ...) or a function.
        **kwargs: base Layer arguments.
    """

    supports_masking = True

    def __init__(self, activation, **kwargs):
        super().__init__(**kwargs)
        self.activation = activations.get(activation)

    def call(self, inputs):
        return _apply_activation(self.activation, _float_input(self, inputs))

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)

    def get_config(self):
        return {**super().get_config(), "activation": activations.serialize(self.activation)}
