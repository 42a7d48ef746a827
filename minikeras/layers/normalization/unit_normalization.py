"""keras.layers.UnitNormalization."""
from minikeras import ops
from minikeras.layers.base import Layer
from minikeras.layers.normalization.rms_normalization import _axes_of, _check_axis

__all__ = ["UnitNormalization"]


class UnitNormalization(Layer):
    """Scale each sample to L2 norm 1 along ``axis``:
    ``x * min(rsqrt(sum(x^2, axis)), 1e12)``.

    Args:
        axis: an int or a list of ints (default -1).
        **kwargs: base Layer arguments.
    """

    supports_masking = True

    def __init__(self, axis=-1, **kwargs):
        super().__init__(**kwargs)
        self.axis = _check_axis("UnitNormalization", axis)

    def call(self, inputs):
        axes = tuple(_axes_of(self, self.axis, inputs.shape))
        inverse_norm = ops.minimum(ops.rsqrt(ops.sum(ops.square(inputs), axis=axes, keepdims=True)), 1e12)
        return inputs * inverse_norm

    def compute_output_shape(self, input_shape):
        _axes_of(self, self.axis, input_shape)
        return tuple(input_shape)

    def get_config(self):
        return {**super().get_config(), "axis": self.axis}
