"""Convolution layers, channels-last as Keras: Conv1D, Conv2D, Conv2DTranspose,
DepthwiseConv2D, SeparableConv2D.

Conv1D and Conv2D are one op with their bias and (for "relu") activation:
``ops.nn.conv.conv_bias_relu`` applies them to each block of the product
while it is in cache. The other layers call their convolution op and then
add the bias (and relu) in one node written in place into the
convolution's output: that output is a fresh array only this call holds
and the convolution's backward does not read it, so the bias add costs no
allocation and no extra pass for relu.

Layers applying "softmax" or "sigmoid" keep the pre-activation Tensor on
their output (``attach_logits``, as Dense does), for the stable
fused crossentropy path.
"""
from minikeras import activations, constraints, initializers, ops, regularizers
from minikeras.layers.base import Layer
from minikeras.layers.core import (_add_activity_loss, _apply_activation, _float_input, _kernel_config,
                                  _set_kernel_arguments)
from minikeras.layers.input_spec import InputSpec
from minikeras.ops.nn.conv import conv_bias_relu
from minikeras.ops.nn.conv_grouped import grouped_conv
from minikeras._support.argument_validation import standardize_padding, standardize_tuple, validate_int

__all__ = ["Conv1D", "Conv2D", "Conv2DTranspose", "DepthwiseConv2D", "SeparableConv2D",
           "Convolution1D", "Convolution2D", "Convolution2DTranspose", "SeparableConvolution2D"]


# ---------------------------------------------------------------- helpers
_SPATIAL_AXES = {1: "steps, ", 2: "height, width, ", 3: "depth, height, width, "}

def _int_tuple(class_name, name, value, rank, allow_zero=False):
    """``value`` (an int or ``rank`` ints) as a tuple of ``rank`` ints
    (see :func:`minikeras._support.argument_validation.standardize_tuple`)."""
    return standardize_tuple(class_name, name, value, rank, allow_zero)


def _check_channels_last(class_name, data_format):
    """Return "channels_last"; only that layout is implemented."""
    if data_format in (None, "channels_last"):
        return "channels_last"
    if data_format == "channels_first":
        raise ValueError(
            f"{class_name}: data_format='channels_first' is not supported; minikeras layers are channels_last "
            "(batch, ..., channels). Transpose the input (e.g. with Permute) or use data_format='channels_last'."
        )
    raise ValueError(f"{class_name}: data_format must be 'channels_last', received {data_format!r}.")


def _finish(layer, conv_out, bias):
    """Bias add, activation and activity loss after a convolution."""
    fuse_relu = layer.activation is activations.relu
    if bias is not None or fuse_relu:
        conv_out = ops.bias_activation(conv_out, bias, relu=fuse_relu)
    outputs = conv_out if fuse_relu else _apply_activation(layer.activation, conv_out)
    _add_activity_loss(layer, outputs)
    return outputs


def _conv_output_length(size, window, stride, dilation, padding):
    """Keras's output length of one convolution/pooling axis (None if unknown)."""
    if size is None:
        return None
    effective = (window - 1) * dilation + 1
    if padding in ("same", "causal"):
        return -(-size // stride)
    return (size - effective) // stride + 1 if size >= effective else 0


# -------------------------------------------------------------------- Conv
class _Conv(Layer):
    """Shared arguments, weights and config of the convolution layers."""

    rank = 2
    _paddings = ("valid", "same")

    def __init__(self, filters, kernel_size, strides=1, padding="valid", data_format=None, dilation_rate=1,
                 groups=1, activation=None, use_bias=True, kernel_initializer="glorot_uniform",
                 bias_initializer="zeros", kernel_regularizer=None, bias_regularizer=None,
                 activity_regularizer=None, kernel_constraint=None, bias_constraint=None, **kwargs):
        super().__init__(**kwargs)
        name = type(self).__name__
        rank = self.rank
        self.filters = None if filters is None else validate_int(name, "filters", filters, minimum=1)
        self.kernel_size = _int_tuple(name, "kernel_size", kernel_size, rank)
        self.strides = _int_tuple(name, "strides", strides, rank)
        self.padding = standardize_padding(name, padding, self._paddings)
        self.data_format = _check_channels_last(name, data_format)
        self.dilation_rate = _int_tuple(name, "dilation_rate", dilation_rate, rank)
        self.groups = validate_int(name, "groups", groups, minimum=1)
        if self.filters is not None and self.filters % self.groups:
            raise ValueError(f"{name}: the number of filters must be evenly divisible by the number of groups. "
                             f"Received: groups={self.groups}, filters={self.filters}.")
        if max(self.strides) > 1 and max(self.dilation_rate) > 1:
            raise ValueError(
                f"{name}: strides > 1 cannot be combined with dilation_rate > 1 (as in Keras), received "
                f"strides={self.strides}, dilation_rate={self.dilation_rate}."
            )
        _set_kernel_arguments(self, activation, use_bias, kernel_initializer, bias_initializer, kernel_regularizer,
                              bias_regularizer, activity_regularizer, kernel_constraint, bias_constraint)
        self.input_spec = InputSpec(ndim=rank + 2)
        self.kernel = self.bias = None

    def _input_channels(self, input_shape):
        channels = input_shape[-1] if input_shape else None
        if input_shape is None or len(input_shape) != self.rank + 2:
            raise ValueError(
                f"Layer '{self.name}' ({type(self).__name__}) expects inputs of rank {self.rank + 2} "
                f"(batch, {_SPATIAL_AXES[self.rank]}channels), received input shape "
                f"{None if input_shape is None else tuple(input_shape)}."
            )
        if channels is None:
            raise ValueError(
                f"Layer '{self.name}': the channel axis (last) of the input must be known, received input shape "
                f"{tuple(input_shape)}."
            )
        if channels % self.groups:
            raise ValueError(
                f"Layer '{self.name}' ({type(self).__name__}): the number of input channels must be evenly "
                f"divisible by the number of groups. Received groups={self.groups}, but the input has "
                f"{channels} channels (full input shape is {tuple(input_shape)})."
            )
        return int(channels)

    def _kernel_shape(self, channels):
        return self.kernel_size + (channels // self.groups, self.filters)

    def _bias_size(self, channels):
        return self.filters

    def build(self, input_shape):
        channels = self._input_channels(input_shape)
        self.kernel = self.add_weight("kernel", self._kernel_shape(channels), initializer=self.kernel_initializer,
                                      regularizer=self.kernel_regularizer, constraint=self.kernel_constraint)
        if self.use_bias:
            self.bias = self.add_weight("bias", (self._bias_size(channels),), initializer=self.bias_initializer,
                                        regularizer=self.bias_regularizer, constraint=self.bias_constraint)
        self.input_spec = InputSpec(ndim=self.rank + 2, axes={-1: channels})
        self.built = True

    def _convolve(self, inputs):
        if self.groups > 1:
            unpack = (lambda value: value[0]) if self.rank == 1 else (lambda value: value)
            return grouped_conv(inputs, self.kernel, self.groups, self.rank, unpack(self.strides), self.padding,
                                unpack(self.dilation_rate))
        if self.rank == 1:
            return ops.conv1d(inputs, self.kernel, self.strides[0], self.padding, self.dilation_rate[0])
        return ops.conv2d(inputs, self.kernel, self.strides, self.padding, self.dilation_rate)

    def call(self, inputs):
        inputs = _float_input(self, inputs)
        if type(self)._convolve is not _Conv._convolve or self.groups > 1:  # transposed, depthwise, separable
            return _finish(self, self._convolve(inputs), self.bias)
        # Conv1D / Conv2D: bias and ReLU inside the convolution op.
        relu = self.activation is activations.relu
        strides, dilation = (self.strides, self.dilation_rate) if self.rank == 2 else (self.strides[0],
                                                                                      self.dilation_rate[0])
        out = conv_bias_relu(inputs, self.kernel, self.bias, relu, self.rank, strides, self.padding, dilation)
        outputs = out if relu else _apply_activation(self.activation, out)
        _add_activity_loss(self, outputs)
        return outputs

    def _spatial_output(self, input_shape):
        return tuple(
            _conv_output_length(size, k, s, d, self.padding)
            for size, k, s, d in zip(input_shape[1:-1], self.kernel_size, self.strides, self.dilation_rate)
        )

    def _output_channels(self, channels):
        return self.filters

    def compute_output_shape(self, input_shape):
        return (input_shape[0],) + self._spatial_output(input_shape) + (self._output_channels(input_shape[-1]),)

    def get_config(self):
        config = {
            **super().get_config(),
            "filters": self.filters,
            "kernel_size": self.kernel_size,
            "strides": self.strides,
            "padding": self.padding,
            "data_format": self.data_format,
            "dilation_rate": self.dilation_rate,
            "groups": self.groups,
            **_kernel_config(self),
        }
        for key in ("kernel_size", "strides", "dilation_rate"):
            config[key] = list(config[key])
        return config


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
        config["output_padding"] = None if self.output_padding is None else list(self.output_padding)
        return config


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


# Keras's long aliases.
Convolution1D = Conv1D
Convolution2D = Conv2D
Convolution2DTranspose = Conv2DTranspose
SeparableConvolution2D = SeparableConv2D
