"""keras.layers.Conv2D (Convolution2D)."""
from minikeras.layers.convolutional.base_conv import _Conv

__all__ = ["Conv2D", "Convolution2D"]


class Conv2D(_Conv):
    """2-D convolution: ``activation(conv2d(inputs, kernel) + bias)``.

    Args:
        filters: the number of output channels.
        kernel_size: an int or (height, width); the kernel is
            ``(kh, kw, in_channels, filters)``.
        strides: an int or pair, default 1.
        padding: "valid" (default) or "same" (TensorFlow's: output size
            ceil(size / stride), the odd padding at the bottom/right).
        data_format: None or "channels_last" (channels_first is refused).
        dilation_rate: an int or pair; cannot be combined with strides > 1.
        groups: split the input channels and the filters into this many
            groups, filter group g seeing only input group g (kernel
            ``(kh, kw, in_channels // groups, filters)``); ``groups ==
            in_channels`` is a depthwise convolution.
        activation: a name or function; None for linear.
        use_bias: add a bias of ``filters`` values.
        kernel_initializer, bias_initializer: default glorot_uniform, zeros.
        kernel_regularizer, bias_regularizer, activity_regularizer: penalties.
        kernel_constraint, bias_constraint: projections after each update.
        **kwargs: base Layer arguments (name, dtype, trainable, input_shape).

    Example:
        >>> Conv2D(16, 3, padding="same", activation="relu")(np.zeros((8, 32, 32, 3), "float32")).shape
        (8, 32, 32, 16)
    """

    rank = 2

    def __init__(self, filters, kernel_size, strides=(1, 1), padding="valid", data_format=None,
                 dilation_rate=(1, 1), groups=1, activation=None, use_bias=True, **kwargs):
        super().__init__(filters, kernel_size, strides, padding, data_format, dilation_rate, groups, activation,
                         use_bias, **kwargs)


Convolution2D = Conv2D
