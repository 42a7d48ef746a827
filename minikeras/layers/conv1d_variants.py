"""The 1-D members of the convolution family that run on their 2-D op:
Conv1DTranspose, DepthwiseConv1D and SeparableConv1D.

Their kernels have Keras's 1-D shapes (so weight files move both ways);
the call views ``(batch, steps, channels)`` as an image of height 1 and the
kernel as ``(1, k, ...)`` (both views are differentiable reshapes), runs the
2-D op and drops the height axis again.
"""
from minikeras import ops
from minikeras.layers.base import _LAYER_CLASSES
from minikeras.layers.conv import Conv2DTranspose, DepthwiseConv2D, SeparableConv2D, _int_tuple

__all__ = ["Conv1DTranspose", "DepthwiseConv1D", "SeparableConv1D", "Convolution1DTranspose",
           "SeparableConvolution1D"]


def _as_image(tensor):
    return ops.expand_dims(tensor, 1)


def _as_kernel_2d(kernel):
    return ops.expand_dims(kernel, 0)


def _as_sequence(image):
    return ops.squeeze(image, 1)


class Conv1DTranspose(Conv2DTranspose):
    """Transposed 1-D convolution (the gradient of Conv1D w.r.t. its input).

    Args as Conv1D, plus ``output_padding`` (None or an int smaller than the
    stride). The kernel is ``(k, filters, in_channels)``, as in Keras.
    """

    rank = 1

    def __init__(self, filters, kernel_size, strides=1, padding="valid", output_padding=None, data_format=None,
                 dilation_rate=1, activation=None, use_bias=True, **kwargs):
        if output_padding is not None:
            output_padding = _int_tuple("Conv1DTranspose", "output_padding", output_padding, 1, allow_zero=True)
        super().__init__(filters, kernel_size, strides, padding, None, data_format, dilation_rate, activation,
                         use_bias, **kwargs)
        if output_padding is not None and output_padding[0] >= self.strides[0]:
            raise ValueError(f"Conv1DTranspose: output_padding {output_padding} must be smaller than strides "
                             f"{self.strides}.")
        self.output_padding = output_padding

    def _convolve(self, inputs):
        output_padding = None if self.output_padding is None else (0,) + self.output_padding
        out = ops.conv2d_transpose(_as_image(inputs), _as_kernel_2d(self.kernel), (1,) + self.strides, self.padding,
                                   output_padding, (1,) + self.dilation_rate)
        return _as_sequence(out)

    def _spatial_output(self, input_shape):
        size = input_shape[1]
        k = (self.kernel_size[0] - 1) * self.dilation_rate[0] + 1
        s = self.strides[0]
        if size is None:
            return (None,)
        if self.output_padding is None:
            return (size * s + max(k - s, 0) if self.padding == "valid" else size * s,)
        pad = k // 2 if self.padding == "same" else 0
        return ((size - 1) * s + k - 2 * pad + self.output_padding[0],)


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


Convolution1DTranspose = Conv1DTranspose
SeparableConvolution1D = SeparableConv1D
for _alias in ("Convolution1DTranspose", "SeparableConvolution1D"):
    _LAYER_CLASSES.setdefault(_alias, globals()[_alias])
del _alias
