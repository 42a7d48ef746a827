"""keras.layers.Conv3D (Convolution3D)."""
from minikeras import ops
from minikeras.layers.convolutional.base_conv import _Conv
from minikeras.ops.nn.conv_grouped import grouped_conv

__all__ = ["Conv3D", "Convolution3D"]


class Conv3D(_Conv):
    """3-D convolution over ``(batch, depth, height, width, channels)``.

    Args as Conv2D with triples: kernel ``(kd, kh, kw, in_channels,
    filters)``, strides/dilation_rate an int or 3 ints, padding "valid" or
    "same", ``groups`` as Conv2D's. Weights: kernel, bias.
    """

    rank = 3

    def __init__(self, filters, kernel_size, strides=(1, 1, 1), padding="valid", data_format=None,
                 dilation_rate=(1, 1, 1), groups=1, activation=None, use_bias=True, **kwargs):
        super().__init__(filters, kernel_size, strides, padding, data_format, dilation_rate, groups, activation,
                         use_bias, **kwargs)

    def _convolve(self, inputs):
        if self.groups > 1:
            return grouped_conv(inputs, self.kernel, self.groups, 3, self.strides, self.padding, self.dilation_rate)
        return ops.conv3d(inputs, self.kernel, self.strides, self.padding, self.dilation_rate)


Convolution3D = Conv3D
