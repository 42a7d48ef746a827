"""keras.layers.SeparableConv2D (SeparableConvolution2D)."""
from minikeras import constraints, initializers, ops, regularizers
from minikeras.layers.convolutional.base_conv import _Conv
from minikeras.layers.input_spec import InputSpec
from minikeras._support.argument_validation import validate_int

__all__ = ["SeparableConv2D", "SeparableConvolution2D"]


class SeparableConv2D(_Conv):
    """Depthwise separable 2-D convolution: a depthwise convolution, then a
    1x1 convolution mixing the channels into ``filters`` outputs.

    Args:
        filters, kernel_size, strides, padding, data_format, dilation_rate,
            activation, use_bias: as Conv2D.
        depth_multiplier: depthwise filters per input channel.
        depthwise_initializer / _regularizer / _constraint: for
            ``depthwise_kernel`` ``(kh, kw, in_channels, depth_multiplier)``.
        pointwise_initializer / _regularizer / _constraint: for
            ``pointwise_kernel`` ``(1, 1, in_channels * depth_multiplier, filters)``.
        bias_initializer, bias_regularizer, bias_constraint,
            activity_regularizer: as Conv2D.

    Weights, in order: depthwise_kernel, pointwise_kernel, bias (as Keras).
    """

    rank = 2

    def __init__(self, filters, kernel_size, strides=(1, 1), padding="valid", data_format=None,
                 dilation_rate=(1, 1), depth_multiplier=1, activation=None, use_bias=True,
                 depthwise_initializer="glorot_uniform", pointwise_initializer="glorot_uniform",
                 bias_initializer="zeros", depthwise_regularizer=None, pointwise_regularizer=None,
                 bias_regularizer=None, activity_regularizer=None, depthwise_constraint=None,
                 pointwise_constraint=None, bias_constraint=None, **kwargs):
        super().__init__(filters, kernel_size, strides, padding, data_format, dilation_rate, 1, activation,
                         use_bias, kernel_initializer=depthwise_initializer, bias_initializer=bias_initializer,
                         kernel_regularizer=depthwise_regularizer, bias_regularizer=bias_regularizer,
                         activity_regularizer=activity_regularizer, kernel_constraint=depthwise_constraint,
                         bias_constraint=bias_constraint, **kwargs)
        self.depth_multiplier = validate_int("SeparableConv2D", "depth_multiplier", depth_multiplier, minimum=1)
        self.pointwise_initializer = initializers.get(pointwise_initializer)
        self.pointwise_regularizer = regularizers.get(pointwise_regularizer)
        self.pointwise_constraint = constraints.get(pointwise_constraint)
        self.depthwise_kernel = self.pointwise_kernel = None

    def build(self, input_shape):
        channels = self._input_channels(input_shape)
        self.depthwise_kernel = self.add_weight(
            "depthwise_kernel", self.kernel_size + (channels, self.depth_multiplier),
            initializer=self.kernel_initializer, regularizer=self.kernel_regularizer,
            constraint=self.kernel_constraint)
        self.pointwise_kernel = self.add_weight(
            "pointwise_kernel", (1,) * self.rank + (channels * self.depth_multiplier, self.filters),
            initializer=self.pointwise_initializer, regularizer=self.pointwise_regularizer,
            constraint=self.pointwise_constraint)
        if self.use_bias:
            self.bias = self.add_weight("bias", (self.filters,), initializer=self.bias_initializer,
                                        regularizer=self.bias_regularizer, constraint=self.bias_constraint)
        self.input_spec = InputSpec(ndim=self.rank + 2, axes={-1: channels})
        self.built = True

    def _convolve(self, inputs):
        depthwise = ops.depthwise_conv2d(inputs, self.depthwise_kernel, self.strides, self.padding,
                                         self.dilation_rate)
        return ops.conv2d(depthwise, self.pointwise_kernel)

    def get_config(self):
        config = super().get_config()
        for key in ("groups", "kernel_initializer", "kernel_regularizer", "kernel_constraint"):
            value = config.pop(key)
            if key.startswith("kernel_"):
                config["depthwise_" + key[len("kernel_"):]] = value
        config["depth_multiplier"] = self.depth_multiplier
        config["pointwise_initializer"] = initializers.serialize(self.pointwise_initializer)
        config["pointwise_regularizer"] = regularizers.serialize(self.pointwise_regularizer)
        config["pointwise_constraint"] = constraints.serialize(self.pointwise_constraint)
        return config


SeparableConvolution2D = SeparableConv2D
