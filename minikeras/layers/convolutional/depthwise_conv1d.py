"""keras.layers.DepthwiseConv1D."""
from minikeras import ops
from minikeras.layers.convolutional.conv1d_as_2d import _as_image, _as_kernel_2d, _as_sequence
from minikeras.layers.convolutional.depthwise_conv2d import DepthwiseConv2D

__all__ = ["DepthwiseConv1D"]


class DepthwiseConv1D(DepthwiseConv2D):
    """Depthwise 1-D convolution: each input channel convolved with its own
    ``depth_multiplier`` filters. Args as DepthwiseConv2D with 1-D sizes;
    the kernel is ``(k, in_channels, depth_multiplier)``."""

    rank = 1

    def __init__(self, kernel_size, strides=1, padding="valid", depth_multiplier=1, data_format=None,
                 dilation_rate=1, activation=None, use_bias=True, **kwargs):
        super().__init__(kernel_size, strides, padding, depth_multiplier, data_format, dilation_rate, activation,
                         use_bias, **kwargs)

    def _convolve(self, inputs):
        out = ops.depthwise_conv2d(_as_image(inputs), _as_kernel_2d(self.kernel), (1,) + self.strides, self.padding,
                                   (1,) + self.dilation_rate)
        return _as_sequence(out)
