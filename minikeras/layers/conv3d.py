"""Volumetric layers: Conv3D, MaxPooling3D, AveragePooling3D (channels last)."""
from minikeras import ops
from minikeras.layers.conv import _Conv
from minikeras.layers.pooling import _Pooling
from minikeras.ops.nn.conv_grouped import grouped_conv

__all__ = ["Conv3D", "MaxPooling3D", "AveragePooling3D", "Convolution3D", "MaxPool3D", "AvgPool3D"]


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


class MaxPooling3D(_Pooling):
    """Max over ``pool_size`` windows of a volume (default (2, 2, 2);
    strides default to pool_size; padding "valid" or "same")."""

    rank = 3
    _op_name = "max_pool3d"

    def __init__(self, pool_size=(2, 2, 2), strides=None, padding="valid", data_format=None, **kwargs):
        super().__init__(pool_size, strides, padding, data_format, **kwargs)


class AveragePooling3D(_Pooling):
    """Mean over ``pool_size`` windows of a volume (padding not counted)."""

    rank = 3
    _op_name = "avg_pool3d"

    def __init__(self, pool_size=(2, 2, 2), strides=None, padding="valid", data_format=None, **kwargs):
        super().__init__(pool_size, strides, padding, data_format, **kwargs)


Convolution3D = Conv3D
MaxPool3D = MaxPooling3D
AvgPool3D = AveragePooling3D
