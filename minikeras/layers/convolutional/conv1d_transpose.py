"""keras.layers.Conv1DTranspose (Convolution1DTranspose)."""
from minikeras import ops
from minikeras.layers.base import _LAYER_CLASSES
from minikeras.layers.convolutional.base_conv import _int_tuple
from minikeras.layers.convolutional.conv1d_as_2d import _as_image, _as_kernel_2d, _as_sequence
from minikeras.layers.convolutional.conv2d_transpose import Conv2DTranspose

__all__ = ["Conv1DTranspose"]


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


# Keras's short alias, also known by name when loading a Keras config.
Convolution1DTranspose = Conv1DTranspose
_LAYER_CLASSES.setdefault("Convolution1DTranspose", Convolution1DTranspose)
