"""The base of the global pooling layers (1D, 2D, 3D)."""
from minikeras import ops
from minikeras.layers.base import Layer
from minikeras.layers.convolutional.base_conv import _check_channels_last
from minikeras.layers.input_spec import InputSpec


class _GlobalPooling(Layer):
    """Mean or max over every spatial axis: ``(batch, ..., channels)`` ->
    ``(batch, channels)`` (``(batch, 1, ..., 1, channels)`` with keepdims)."""

    rank = 2
    _reduce_name = None  # "mean" or "max"

    def __init__(self, data_format=None, keepdims=False, **kwargs):
        super().__init__(**kwargs)
        self.data_format = _check_channels_last(type(self).__name__, data_format)
        self.keepdims = bool(keepdims)
        self.input_spec = InputSpec(ndim=self.rank + 2)

    def call(self, inputs):
        axes = tuple(range(1, self.rank + 1))
        return getattr(ops, self._reduce_name)(inputs, axis=axes, keepdims=self.keepdims)

    def compute_output_shape(self, input_shape):
        if self.keepdims:
            return (input_shape[0],) + (1,) * self.rank + (input_shape[-1],)
        return (input_shape[0], input_shape[-1])

    def get_config(self):
        return {**super().get_config(), "data_format": self.data_format, "keepdims": self.keepdims}
