"""Pooling layers, channels-last as Keras: MaxPooling1D/2D, AveragePooling1D/2D,
GlobalAveragePooling1D/2D, GlobalMaxPooling1D/2D, and Keras's short aliases
(MaxPool2D, AvgPool2D, GlobalAvgPool2D, ...).

The windowed layers call ``minikeras.ops`` max/avg pooling (TensorFlow's
"same" padding: the padding never wins a max and is not counted in an
average); the global ones are a mean or max over the spatial axes.
"""
from minikeras import ops
from minikeras.layers.base import _LAYER_CLASSES, Layer
from minikeras.layers.conv import _check_channels_last, _conv_output_length, _int_tuple
from minikeras.layers.input_spec import InputSpec
from minikeras._support.argument_validation import standardize_padding

__all__ = [
    "MaxPooling1D", "MaxPooling2D", "AveragePooling1D", "AveragePooling2D",
    "GlobalAveragePooling1D", "GlobalAveragePooling2D", "GlobalMaxPooling1D", "GlobalMaxPooling2D",
    "MaxPool1D", "MaxPool2D", "AvgPool1D", "AvgPool2D",
    "GlobalAvgPool1D", "GlobalAvgPool2D", "GlobalMaxPool1D", "GlobalMaxPool2D",
]


class _Pooling(Layer):
    """Shared arguments and config of the windowed pooling layers."""

    rank = 2
    _op_name = None  # the minikeras.ops function

    def __init__(self, pool_size, strides=None, padding="valid", data_format=None, **kwargs):
        super().__init__(**kwargs)
        name = type(self).__name__
        self.pool_size = _int_tuple(name, "pool_size", pool_size, self.rank)
        self.strides = self.pool_size if strides is None else _int_tuple(name, "strides", strides, self.rank)
        self.padding = standardize_padding(name, padding)
        self.data_format = _check_channels_last(name, data_format)
        self.input_spec = InputSpec(ndim=self.rank + 2)

    def call(self, inputs):
        pool = getattr(ops, self._op_name)
        if self.rank == 1:
            return pool(inputs, self.pool_size[0], self.strides[0], self.padding)
        return pool(inputs, self.pool_size, self.strides, self.padding)

    def compute_output_shape(self, input_shape):
        spatial = tuple(
            _conv_output_length(size, window, stride, 1, self.padding)
            for size, window, stride in zip(input_shape[1:-1], self.pool_size, self.strides)
        )
        return (input_shape[0],) + spatial + (input_shape[-1],)

    def get_config(self):
        return {
            **super().get_config(),
            "pool_size": list(self.pool_size),
            "strides": list(self.strides),
            "padding": self.padding,
            "data_format": self.data_format,
        }


class MaxPooling2D(_Pooling):
    """Max over windows of ``(batch, height, width, channels)``.

    Args:
        pool_size: an int or (height, width), default (2, 2).
        strides: an int, a pair, or None (default: pool_size).
        padding: "valid" (default) or "same" (TensorFlow's).
        data_format: None or "channels_last" (channels_first is refused).
        **kwargs: base Layer arguments.

    Example:
        >>> MaxPooling2D()(np.zeros((8, 32, 32, 16), "float32")).shape
        (8, 16, 16, 16)
    """

    rank = 2
    _op_name = "max_pool2d"

    def __init__(self, pool_size=(2, 2), strides=None, padding="valid", data_format=None, **kwargs):
        super().__init__(pool_size, strides, padding, data_format, **kwargs)


class AveragePooling2D(_Pooling):
    """Average over windows of ``(batch, height, width, channels)``; with
    "same" padding a window averages its real elements only. Args as
    MaxPooling2D."""

    rank = 2
    _op_name = "avg_pool2d"

    def __init__(self, pool_size=(2, 2), strides=None, padding="valid", data_format=None, **kwargs):
        super().__init__(pool_size, strides, padding, data_format, **kwargs)


class MaxPooling1D(_Pooling):
    """Max over windows of ``(batch, steps, channels)``.

    Args:
        pool_size: an int, default 2.
        strides: an int or None (default: pool_size).
        padding: "valid" (default) or "same".
        data_format: None or "channels_last".
        **kwargs: base Layer arguments.
    """

    rank = 1
    _op_name = "max_pool1d"

    def __init__(self, pool_size=2, strides=None, padding="valid", data_format=None, **kwargs):
        super().__init__(pool_size, strides, padding, data_format, **kwargs)


class AveragePooling1D(_Pooling):
    """Average over windows of ``(batch, steps, channels)``. Args as MaxPooling1D."""

    rank = 1
    _op_name = "avg_pool1d"

    def __init__(self, pool_size=2, strides=None, padding="valid", data_format=None, **kwargs):
        super().__init__(pool_size, strides, padding, data_format, **kwargs)


class _GlobalPooling(Layer):
    """Mean or max over every spatial axis: ``(batch, ..., channels)`` ->
    ``(batch, channels)`` (``(batch, 1, ..., 1, channels)`` with keepdims)."""

    rank = 2
    _reduce_name = None  # "mean" or "max"

    def __init__(self, data_format=None, keepdims=False, **kwargs):
        super().__init__(**kwargs)
        self.data_format = _check_channels_last(type(self).__name__, data_format)
        self.keepdims = bool(keepdims)
        self.input_spec = InputSpec(ndim=self.rank + 2)

    def call(self, inputs):
        axes = tuple(range(1, self.rank + 1))
        return getattr(ops, self._reduce_name)(inputs, axis=axes, keepdims=self.keepdims)

    def compute_output_shape(self, input_shape):
        if self.keepdims:
            return (input_shape[0],) + (1,) * self.rank + (input_shape[-1],)
        return (input_shape[0], input_shape[-1])

    def get_config(self):
        return {**super().get_config(), "data_format": self.data_format, "keepdims": self.keepdims}


class GlobalAveragePooling2D(_GlobalPooling):
    """Mean over height and width.

    Args:
        data_format: None or "channels_last".
        keepdims: keep the spatial axes with size 1 (default False).
        **kwargs: base Layer arguments.
    """

    rank = 2
    _reduce_name = "mean"


class GlobalMaxPooling2D(_GlobalPooling):
    """Max over height and width. Args as GlobalAveragePooling2D."""

    rank = 2
    _reduce_name = "max"


class GlobalAveragePooling1D(_GlobalPooling):
    """Mean over the steps of ``(batch, steps, channels)``. Args as
    GlobalAveragePooling2D."""

    rank = 1
    _reduce_name = "mean"

    def call(self, inputs, mask=None):
        """With a ``(batch, steps)`` mask (e.g. from Embedding(mask_zero=True)),
        the mean runs over the kept steps only, as in Keras."""
        if mask is None:
            return super().call(inputs)
        weights = ops.expand_dims(ops.cast(mask, inputs.dtype), -1)
        total = ops.sum(inputs * weights, axis=1, keepdims=self.keepdims)
        return total / ops.sum(weights, axis=1, keepdims=self.keepdims)


class GlobalMaxPooling1D(_GlobalPooling):
    """Max over the steps of ``(batch, steps, channels)``. Args as
    GlobalAveragePooling2D."""

    rank = 1
    _reduce_name = "max"


# Keras's short aliases, also known by name when loading a Keras config.
MaxPool1D, MaxPool2D = MaxPooling1D, MaxPooling2D
AvgPool1D, AvgPool2D = AveragePooling1D, AveragePooling2D
GlobalAvgPool1D, GlobalAvgPool2D = GlobalAveragePooling1D, GlobalAveragePooling2D
GlobalMaxPool1D, GlobalMaxPool2D = GlobalMaxPooling1D, GlobalMaxPooling2D
for _alias in ("MaxPool1D", "MaxPool2D", "AvgPool1D", "AvgPool2D", "GlobalAvgPool1D", "GlobalAvgPool2D",
               "GlobalMaxPool1D", "GlobalMaxPool2D"):
    _LAYER_CLASSES.setdefault(_alias, globals()[_alias])
del _alias
