"""keras.layers.SeparableConv1D (SeparableConvolution1D)."""
from minikeras import ops
from minikeras.layers.base import _LAYER_CLASSES
from minikeras.layers.convolutional.conv1d_as_2d import _as_image, _as_kernel_2d, _as_sequence
from minikeras.layers.convolutional.separable_conv2d import SeparableConv2D

__all__ = ["SeparableConv1D"]


class SeparableConv1D(SeparableConv2D):
    """Depthwise separable 1-D convolution: a depthwise convolution, then a
    pointwise one mixing channels into ``filters``. Args as SeparableConv2D
    with 1-D sizes. Weights, in order: depthwise_kernel ``(k, in, m)``,
    pointwise_kernel ``(1, in * m, filters)``, bias."""

    rank = 1

    def __init__(self, filters, kernel_size, strides=1, padding="valid", data_format=None, dilation_rate=1,
                 depth_multiplier=1, activation=None, use_bias=True, **kwargs):
        super().__init__(filters, kernel_size, strides, padding, data_format, dilation_rate, depth_multiplier,
                         activation, use_bias, **kwargs)

    def _convolve(self, inputs):
        depthwise = ops.depthwise_conv2d(_as_image(inputs), _as_kernel_2d(self.depthwise_kernel),
                                         (1,) + self.strides, self.padding, (1,) + self.dilation_rate)
        return _as_sequence(ops.conv2d(depthwise, _as_kernel_2d(self.pointwise_kernel)))


# Keras's short alias, also known by name when loading a Keras config.
SeparableConvolution1D = SeparableConv1D
_LAYER_CLASSES.setdefault("SeparableConvolution1D", SeparableConvolution1D)
