"""Conv3DTranspose: the volumetric member of the transposed convolutions.

It is Conv2DTranspose with triples (kernel ``(kd, kh, kw, filters,
in_channels)``, Keras's layout) over ``ops.conv3d_transpose``; the bias,
activation and config are Conv2DTranspose's.
"""
from minikeras import ops
from minikeras.layers.base import _LAYER_CLASSES
from minikeras.layers.convolutional.conv2d_transpose import Conv2DTranspose

__all__ = ["Conv3DTranspose", "Convolution3DTranspose"]


class Conv3DTranspose(Conv2DTranspose):
    """Transposed 3-D convolution over ``(batch, depth, height, width, channels)``.

    Args as Conv3D, plus ``output_padding`` (None, an int or 3 ints, each
    smaller than its stride). Weights: kernel ``(kd, kh, kw, filters,
    in_channels)``, bias ``(filters,)``. Output size per axis without
    output_padding: ``size * stride + max(k - stride, 0)`` for "valid",
    ``size * stride`` for "same".

    Example:
        >>> Conv3DTranspose(4, 3, strides=2)(np.zeros((1, 2, 3, 4, 2), "float32")).shape
        (1, 5, 7, 9, 4)
    """

    rank = 3

    def __init__(self, filters, kernel_size, strides=(1, 1, 1), padding="valid", output_padding=None,
                 data_format=None, dilation_rate=(1, 1, 1), activation=None, use_bias=True, **kwargs):
        super().__init__(filters, kernel_size, strides, padding, output_padding, data_format, dilation_rate,
                         activation, use_bias, **kwargs)

    def _convolve(self, inputs):
        return ops.conv3d_transpose(inputs, self.kernel, self.strides, self.padding, self.output_padding,
                                    self.dilation_rate)


Convolution3DTranspose = Conv3DTranspose
_LAYER_CLASSES.setdefault("Convolution3DTranspose", Conv3DTranspose)
