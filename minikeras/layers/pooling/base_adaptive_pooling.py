"""The base of AdaptiveAveragePooling1D/2D/3D and AdaptiveMaxPooling1D/2D/3D: pool
channels-last inputs of any spatial size to a fixed ``output_size``.
"""
from minikeras.layers.base import Layer
from minikeras.layers.convolutional.base_conv import _check_channels_last
from minikeras.layers.input_spec import InputSpec
from minikeras.ops.nn.pool_adaptive import _adaptive_pool
from minikeras._support.argument_validation import is_int

_AXES = {1: "integer or tuple of 1 integer", 2: "integer or (height, width) tuple",
         3: "integer or (depth, height, width) tuple"}


class _AdaptivePooling(Layer):
    rank = 1
    mode = "average"

    def __init__(self, output_size, data_format=None, **kwargs):
        super().__init__(**kwargs)
        name = type(self).__name__
        if is_int(output_size):
            output_size = (int(output_size),) * self.rank
        elif isinstance(output_size, (tuple, list)) and len(output_size) == self.rank and all(
                is_int(v) for v in output_size):
            output_size = tuple(int(v) for v in output_size)
        else:
            raise TypeError(f"`output_size` must be an {_AXES[self.rank]}. Received: {output_size} of type "
                            f"{type(output_size)} ({name})")
        if any(v < 1 for v in output_size):
            raise ValueError(f"{name}: output_size must be positive, received {output_size}.")
        self.output_size = output_size
        self.data_format = _check_channels_last(name, data_format)
        self.input_spec = InputSpec(ndim=self.rank + 2)

    def call(self, inputs):
        return _adaptive_pool(inputs, self.output_size, self.mode)

    def compute_output_shape(self, input_shape):
        return (input_shape[0],) + self.output_size + (input_shape[-1],)

    def get_config(self):
        return {**super().get_config(), "output_size": tuple(self.output_size), "data_format": self.data_format}
