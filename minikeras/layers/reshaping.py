"""Spatial reshaping layers, channels-last as Keras: ZeroPadding1D/2D,
Cropping1D/2D, UpSampling1D/2D.

Padding and cropping are ``minikeras.ops.pad`` and ``getitem``. Nearest
upsampling is one node here (a broadcast copy forward, a reshape-and-sum
backward) rather than one ``repeat`` per axis; bilinear upsampling applies
one small interpolation matrix per axis (TensorFlow's half-pixel-centre
resize, as Keras's UpSampling2D uses).
"""
import numpy

from minikeras import ops
from minikeras.layers.base import Layer
from minikeras.layers.conv import _check_channels_last, _int_tuple
from minikeras.layers.input_spec import InputSpec
from minikeras._support.argument_validation import is_int

__all__ = ["ZeroPadding1D", "ZeroPadding2D", "Cropping1D", "Cropping2D", "UpSampling1D", "UpSampling2D"]


def _pairs(class_name, name, value, rank):
    """Keras's spatial (before, after) amounts: an int (all sides), ``rank``
    ints (symmetric per axis), or ``rank`` pairs; for rank 1 also one pair."""
    pairs = None
    if is_int(value):
        pairs = ((int(value), int(value)),) * rank
    elif isinstance(value, (tuple, list)):
        if rank == 1 and len(value) == 2 and all(is_int(v) for v in value):
            pairs = ((int(value[0]), int(value[1])),)
        elif rank == 2 and len(value) == 2 and all(is_int(v) for v in value):
            pairs = tuple((int(v), int(v)) for v in value)
        elif len(value) == rank and all(isinstance(p, (tuple, list)) and len(p) == 2 and all(is_int(v) for v in p)
                                        for p in value):
            pairs = tuple((int(p[0]), int(p[1])) for p in value)
    if pairs is None:
        shapes = "an int or a pair of ints (before, after)" if rank == 1 else \
            "an int, a pair of ints (height, width), or ((top, bottom), (left, right))"
        raise ValueError(f"{class_name}: {name} must be {shapes}, received {value!r}.")
    if any(v < 0 for pair in pairs for v in pair):
        raise ValueError(f"{class_name}: {name} must be non-negative, received {value!r}.")
    return pairs


# ------------------------------------------------------------ ZeroPadding
class _ZeroPadding(Layer):
    rank = 2

    def __init__(self, padding, data_format=None, **kwargs):
        super().__init__(**kwargs)
        self.padding = _pairs(type(self).__name__, "padding", padding, self.rank)
        self.data_format = _check_channels_last(type(self).__name__, data_format)
        self.input_spec = InputSpec(ndim=self.rank + 2)

    def call(self, inputs):
        return ops.pad(inputs, ((0, 0),) + self.padding + ((0, 0),))

    def compute_output_shape(self, input_shape):
        spatial = tuple(None if size is None else size + a + b
                        for size, (a, b) in zip(input_shape[1:-1], self.padding))
        return (input_shape[0],) + spatial + (input_shape[-1],)

    def get_config(self):
        padding = self.padding[0] if self.rank == 1 else self.padding
        return {**super().get_config(), "padding": [list(p) for p in padding] if self.rank == 2 else list(padding),
                "data_format": self.data_format}


class ZeroPadding2D(_ZeroPadding):
    """Pad ``(batch, height, width, channels)`` with zero rows and columns.

    Args:
        padding: an int (all four sides), a pair (symmetric height, width),
            or ((top, bottom), (left, right)). Default (1, 1).
        data_format: None or "channels_last".
        **kwargs: base Layer arguments.

    Example:
        >>> ZeroPadding2D(((1, 0), (2, 2)))(np.zeros((1, 4, 4, 3), "float32")).shape
        (1, 5, 8, 3)
    """

    rank = 2

    def __init__(self, padding=(1, 1), data_format=None, **kwargs):
        super().__init__(padding, data_format, **kwargs)


class ZeroPadding1D(_ZeroPadding):
    """Pad ``(batch, steps, channels)`` with zero steps.

    Args:
        padding: an int (both ends) or (left, right). Default 1.
        **kwargs: base Layer arguments.
    """

    rank = 1

    def __init__(self, padding=1, data_format=None, **kwargs):
        super().__init__(padding, data_format, **kwargs)


# --------------------------------------------------------------- Cropping
class _Cropping(Layer):
    rank = 2

    def __init__(self, cropping, data_format=None, **kwargs):
        super().__init__(**kwargs)
        self.cropping = _pairs(type(self).__name__, "cropping", cropping, self.rank)
        self.data_format = _check_channels_last(type(self).__name__, data_format)
        self.input_spec = InputSpec(ndim=self.rank + 2)

    def call(self, inputs):
        index = [slice(None)]
        for axis, (size, (before, after)) in enumerate(zip(inputs.shape[1:-1], self.cropping), 1):
            if before + after >= size:
                raise ValueError(
                    f"Layer '{self.name}': cropping {self.cropping} removes every element of axis {axis} "
                    f"(size {size}) of the input of shape {tuple(inputs.shape)}."
                )
            index.append(slice(before, size - after))
        return ops.getitem(inputs, tuple(index) + (slice(None),))

    def compute_output_shape(self, input_shape):
        spatial = tuple(None if size is None else size - a - b
                        for size, (a, b) in zip(input_shape[1:-1], self.cropping))
        return (input_shape[0],) + spatial + (input_shape[-1],)

    def get_config(self):
        cropping = [list(p) for p in self.cropping] if self.rank == 2 else list(self.cropping[0])
        return {**super().get_config(), "cropping": cropping, "data_format": self.data_format}


class Cropping2D(_Cropping):
    """Remove rows and columns at the borders of ``(batch, height, width, channels)``.

    Args:
        cropping: an int (all four sides), a pair (symmetric height, width),
            or ((top, bottom), (left, right)). Default no cropping.
        data_format: None or "channels_last".
        **kwargs: base Layer arguments.

    Raises:
        ValueError: on call, when the cropping removes a whole axis.
    """

    rank = 2

    def __init__(self, cropping=((0, 0), (0, 0)), data_format=None, **kwargs):
        super().__init__(cropping, data_format, **kwargs)


class Cropping1D(_Cropping):
    """Remove steps at both ends of ``(batch, steps, channels)``.

    Args:
        cropping: an int (both ends) or (start, end). Default (1, 1).
        **kwargs: base Layer arguments.
    """

    rank = 1

    def __init__(self, cropping=(1, 1), **kwargs):
        super().__init__(cropping, None, **kwargs)

    def get_config(self):
        config = super().get_config()
        del config["data_format"]
        return config


# ------------------------------------------------------------- UpSampling
class UpSampling2D(Layer):
    """Enlarge ``(batch, height, width, channels)`` by integer factors.

    Args:
        size: an int or (height factor, width factor). Default (2, 2).
        data_format: None or "channels_last".
        interpolation: "nearest" (repeat each pixel; default) or "bilinear"
            (TensorFlow's half-pixel-centre resize).
        **kwargs: base Layer arguments.

    Example:
        >>> UpSampling2D()(np.zeros((1, 4, 4, 3), "float32")).shape
        (1, 8, 8, 3)
    """

    rank = 2

    def __init__(self, size=(2, 2), data_format=None, interpolation="nearest", **kwargs):
        super().__init__(**kwargs)
        name = type(self).__name__
        self.size = _int_tuple(name, "size", size, self.rank)
        self.data_format = _check_channels_last(name, data_format)
        if interpolation not in ("nearest", "bilinear") or (self.rank == 1 and interpolation != "nearest"):
            allowed = "'nearest' or 'bilinear'" if self.rank == 2 else "'nearest'"
            raise ValueError(f"{name}: interpolation must be {allowed}, received {interpolation!r}.")
        self.interpolation = interpolation
        self.input_spec = InputSpec(ndim=self.rank + 2)

    def call(self, inputs):
        if self.size == (1,) * self.rank:
            return inputs
        return ops.upsample(inputs, self.size, self.interpolation)

    def compute_output_shape(self, input_shape):
        spatial = tuple(None if s is None else s * f for s, f in zip(input_shape[1:-1], self.size))
        return (input_shape[0],) + spatial + (input_shape[-1],)

    def get_config(self):
        return {**super().get_config(), "size": list(self.size), "data_format": self.data_format,
                "interpolation": self.interpolation}


class UpSampling1D(UpSampling2D):
    """Repeat each step of ``(batch, steps, channels)`` ``size`` times.

    Args:
        size: an int, default 2.
        **kwargs: base Layer arguments.
    """

    rank = 1

    def __init__(self, size=2, **kwargs):
        super().__init__(size=size, **kwargs)

    def get_config(self):
        config = super().get_config()
        config["size"] = self.size[0]
        del config["data_format"], config["interpolation"]
        return config
