"""keras.layers.UpSampling2D (the base of UpSampling1D/3D)."""
from minikeras import ops
from minikeras.layers.base import Layer
from minikeras.layers.convolutional.base_conv import _check_channels_last, _int_tuple
from minikeras.layers.input_spec import InputSpec

__all__ = ["UpSampling2D"]


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
        return {**super().get_config(), "size": tuple(self.size), "data_format": self.data_format,
                "interpolation": self.interpolation}
