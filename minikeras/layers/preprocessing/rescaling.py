"""keras.layers.Rescaling."""
import numbers

import numpy

from minikeras import ops
from minikeras.layers.base import Layer

__all__ = ["Rescaling"]


class Rescaling(Layer):
    """``inputs * scale + offset``, e.g. ``Rescaling(1 / 255)`` for [0, 1]
    pixels or ``Rescaling(1 / 127.5, offset=-1)`` for [-1, 1].

    Args:
        scale: a number, or one per channel.
        offset: a number, or one per channel (default 0).
        **kwargs: base Layer arguments.
    """

    supports_masking = True

    def __init__(self, scale, offset=0.0, **kwargs):
        super().__init__(**kwargs)
        self.scale = self._check("scale", scale)
        self.offset = self._check("offset", offset)

    @staticmethod
    def _check(argument, value):
        values = value if isinstance(value, (list, tuple)) else [value]
        if not values or any(isinstance(v, bool) or not isinstance(v, numbers.Real) for v in values):
            raise TypeError(f"Rescaling: {argument} must be a number or a list of numbers, "
                            f"received {argument}={value!r}.")
        return [float(v) for v in value] if isinstance(value, (list, tuple)) else float(value)

    def call(self, inputs):
        inputs = ops.cast(inputs, self.compute_dtype) if inputs.dtype != self.compute_dtype else inputs
        scale = numpy.asarray(self.scale, dtype=inputs.dtype)
        offset = numpy.asarray(self.offset, dtype=inputs.dtype)
        return inputs * scale + offset

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)

    def get_config(self):
        return {**super().get_config(), "scale": self.scale, "offset": self.offset}
