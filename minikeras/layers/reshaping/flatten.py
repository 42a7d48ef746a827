"""keras.layers.Flatten."""
import math

from minikeras import ops
from minikeras.layers.base import Layer
from minikeras.layers.input_spec import InputSpec

__all__ = ["Flatten"]


# ---------------------------------------------------------------- Flatten
def _check_data_format(layer_name, data_format):
    data_format = data_format or "channels_last"
    if data_format not in ("channels_last", "channels_first"):
        raise ValueError(
            f"{layer_name}: data_format must be 'channels_last' or 'channels_first', received {data_format!r}."
        )
    return data_format


class Flatten(Layer):
    """Flatten every axis but the batch axis: ``(N, d1, d2, ...)`` -> ``(N, d1*d2*...)``.

    Args:
        data_format: "channels_last" (default) or "channels_first"; with
            channels_first the channels are moved last before flattening,
            so that the order matches a channels_last model (as Keras).
        **kwargs: base Layer arguments.
    """

    def __init__(self, data_format=None, **kwargs):
        super().__init__(**kwargs)
        self.data_format = _check_data_format("Flatten", data_format)
        self.input_spec = InputSpec(min_ndim=1)

    def call(self, inputs):
        if self.data_format == "channels_first" and inputs.ndim > 2:
            inputs = ops.transpose(inputs, (0,) + tuple(range(2, inputs.ndim)) + (1,))
        return ops.reshape(inputs, (inputs.shape[0], math.prod(inputs.shape[1:])))

    def compute_output_shape(self, input_shape):
        rest = input_shape[1:]
        return (input_shape[0], None if None in rest else math.prod(rest))

    def get_config(self):
        return {**super().get_config(), "data_format": self.data_format}
