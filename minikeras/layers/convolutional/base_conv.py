"""The base of the convolution layers and their shared argument checks."""
from minikeras import activations, ops
from minikeras.layers.base import Layer
from minikeras.layers.core.dense import (_add_activity_loss, _apply_activation, _float_input, _kernel_config,
                                         _set_kernel_arguments)
from minikeras.layers.input_spec import InputSpec
from minikeras.ops.nn.conv import conv_bias_relu
from minikeras.ops.nn.conv_grouped import grouped_conv
from minikeras._support.argument_validation import standardize_padding, standardize_tuple, validate_int

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
            config[key] = tuple(config[key])
        return config
