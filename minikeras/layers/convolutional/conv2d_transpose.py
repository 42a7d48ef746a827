"""keras.layers.Conv2DTranspose (Convolution2DTranspose)."""
from minikeras import ops
from minikeras.layers.convolutional.base_conv import _Conv, _int_tuple

__all__ = ["Conv2DTranspose", "Convolution2DTranspose"]


class Conv2DTranspose(_Conv):
    """Transposed 2-D convolution (the gradient of Conv2D w.r.t. its input).

    Args as Conv2D, plus:
        output_padding: None, an int or a pair, each smaller than the
            stride: the extra rows/columns at the bottom/right that pick
            one of the output sizes a strided convolution could map back to.

    The kernel is ``(kh, kw, filters, in_channels)``, as in Keras. Output
    size per axis without output_padding: ``size * stride + max(k - stride, 0)``
    for "valid", ``size * stride`` for "same".
    """

    rank = 2

    def __init__(self, filters, kernel_size, strides=(1, 1), padding="valid", output_padding=None,
                 data_format=None, dilation_rate=(1, 1), activation=None, use_bias=True, **kwargs):
        super().__init__(filters, kernel_size, strides, padding, data_format, dilation_rate, 1, activation,
                         use_bias, **kwargs)
        if output_padding is not None:  # (Conv3DTranspose shares this with rank 3)
            name = type(self).__name__
            output_padding = _int_tuple(name, "output_padding", output_padding, self.rank, allow_zero=True)
            if any(p >= s for p, s in zip(output_padding, self.strides)):
                raise ValueError(
                    f"{name}: output_padding {output_padding} must be smaller than strides {self.strides}."
                )
        self.output_padding = output_padding

    def _kernel_shape(self, channels):
        return self.kernel_size + (self.filters, channels)

    def _convolve(self, inputs):
        return ops.conv2d_transpose(inputs, self.kernel, self.strides, self.padding, self.output_padding,
                                    self.dilation_rate)

    def _spatial_output(self, input_shape):
        sizes = []
        for axis, size in enumerate(input_shape[1:-1]):  # also Conv3DTranspose's three axes
            k = (self.kernel_size[axis] - 1) * self.dilation_rate[axis] + 1
            s = self.strides[axis]
            if size is None:
                sizes.append(None)
            elif self.output_padding is None:
                sizes.append(size * s + max(k - s, 0) if self.padding == "valid" else size * s)
            else:
                pad = k // 2 if self.padding == "same" else 0
                sizes.append((size - 1) * s + k - 2 * pad + self.output_padding[axis])
        return tuple(sizes)

    def get_config(self):
        config = super().get_config()
        del config["groups"]
        config["output_padding"] = None if self.output_padding is None else tuple(self.output_padding)
        return config


Convolution2DTranspose = Conv2DTranspose
