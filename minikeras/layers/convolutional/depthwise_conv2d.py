"""keras.layers.DepthwiseConv2D."""
from minikeras import ops
from minikeras.layers.convolutional.base_conv import _Conv
from minikeras._support.argument_validation import validate_int

__all__ = ["DepthwiseConv2D"]


class DepthwiseConv2D(_Conv):
    """Depthwise 2-D convolution: each input channel convolved with its own
    ``depth_multiplier`` filters.

    Args:
        kernel_size, strides, padding, data_format, dilation_rate,
            activation, use_bias: as Conv2D.
        depth_multiplier: filters per input channel; the output has
            ``in_channels * depth_multiplier`` channels (channel
            ``c * depth_multiplier + m`` is filter m of input channel c).
        depthwise_initializer, depthwise_regularizer, depthwise_constraint:
            for the kernel ``(kh, kw, in_channels, depth_multiplier)``.
        bias_initializer, bias_regularizer, bias_constraint,
            activity_regularizer: as Conv2D.
    """

    rank = 2

    def __init__(self, kernel_size, strides=(1, 1), padding="valid", depth_multiplier=1, data_format=None,
                 dilation_rate=(1, 1), activation=None, use_bias=True, depthwise_initializer="glorot_uniform",
                 bias_initializer="zeros", depthwise_regularizer=None, bias_regularizer=None,
                 activity_regularizer=None, depthwise_constraint=None, bias_constraint=None, **kwargs):
        super().__init__(None, kernel_size, strides, padding, data_format, dilation_rate, 1, activation, use_bias,
                         kernel_initializer=depthwise_initializer, bias_initializer=bias_initializer,
                         kernel_regularizer=depthwise_regularizer, bias_regularizer=bias_regularizer,
                         activity_regularizer=activity_regularizer, kernel_constraint=depthwise_constraint,
                         bias_constraint=bias_constraint, **kwargs)
        self.depth_multiplier = validate_int("DepthwiseConv2D", "depth_multiplier", depth_multiplier, minimum=1)

    def _kernel_shape(self, channels):
        return self.kernel_size + (channels, self.depth_multiplier)

    def _bias_size(self, channels):
        return channels * self.depth_multiplier

    def _output_channels(self, channels):
        return None if channels is None else channels * self.depth_multiplier

    def _convolve(self, inputs):
        return ops.depthwise_conv2d(inputs, self.kernel, self.strides, self.padding, self.dilation_rate)

    def get_config(self):
        config = super().get_config()
        for key in ("filters", "groups", "kernel_initializer", "kernel_regularizer", "kernel_constraint"):
            value = config.pop(key)
            if key.startswith("kernel_"):
                config["depthwise_" + key[len("kernel_"):]] = value
        config["depth_multiplier"] = self.depth_multiplier
        return config
