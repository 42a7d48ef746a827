"""The base of the max / average pooling layers (1D, 2D, 3D)."""
from minikeras import ops
from minikeras.layers.base import Layer
from minikeras.layers.convolutional.base_conv import _check_channels_last, _conv_output_length, _int_tuple
from minikeras.layers.input_spec import InputSpec
from minikeras._support.argument_validation import standardize_padding


class _Pooling(Layer):
    """Shared arguments and config of the windowed pooling layers."""

    rank = 2
    _op_name = None  # the minikeras.ops function

    def __init__(self, pool_size, strides=None, padding="valid", data_format=None, **kwargs):
        super().__init__(**kwargs)
        name = type(self).__name__
        self.pool_size = _int_tuple(name, "pool_size", pool_size, self.rank)
        self.strides = self.pool_size if strides is None else _int_tuple(name, "strides", strides, self.rank)
        self.padding = standardize_padding(name, padding)
        self.data_format = _check_channels_last(name, data_format)
        self.input_spec = InputSpec(ndim=self.rank + 2)

    def call(self, inputs):
        pool = getattr(ops, self._op_name)
        if self.rank == 1:
            return pool(inputs, self.pool_size[0], self.strides[0], self.padding)
        return pool(inputs, self.pool_size, self.strides, self.padding)

    def compute_output_shape(self, input_shape):
        spatial = tuple(
            _conv_output_length(size, window, stride, 1, self.padding)
            for size, window, stride in zip(input_shape[1:-1], self.pool_size, self.strides)
        )
        return (input_shape[0],) + spatial + (input_shape[-1],)

    def get_config(self):
        return {
            **super().get_config(),
            "pool_size": tuple(self.pool_size),
            "strides": tuple(self.strides),
            "padding": self.padding,
            "data_format": self.data_format,
        }
