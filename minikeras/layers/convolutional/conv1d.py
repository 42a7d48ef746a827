"""keras.layers.Conv1D (Convolution1D)."""
from minikeras.layers.convolutional.base_conv import _Conv

__all__ = ["Conv1D", "Convolution1D"]


class Conv1D(_Conv):
    """1-D convolution over ``(batch, steps, channels)``.

    Args as Conv2D with single ints; padding may also be "causal" (left
    padding only, so that output t depends on inputs up to t). The kernel
    is ``(kernel_size, in_channels, filters)``.
    """

    rank = 1
    _paddings = ("valid", "same", "causal")

    def __init__(self, filters, kernel_size, strides=1, padding="valid", data_format=None, dilation_rate=1,
                 groups=1, activation=None, use_bias=True, **kwargs):
        super().__init__(filters, kernel_size, strides, padding, data_format, dilation_rate, groups, activation,
                         use_bias, **kwargs)


# Keras's long aliases.
Convolution1D = Conv1D
