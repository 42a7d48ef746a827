"""Deterministic initializers: Zeros, Ones, Constant, Identity, and the
values given directly as an array.
"""

__all__ = ["Zeros", "Ones", "Constant", "Identity"]

import numpy

from minikeras.initializers.base import Initializer, _check_shape


class Zeros(Initializer):
    """All zeros."""

    def __call__(self, shape, dtype="float32"):
        return numpy.zeros(_check_shape("Zeros", shape), dtype=numpy.dtype(dtype or "float32"))


class Ones(Initializer):
    """All ones."""

    def __call__(self, shape, dtype="float32"):
        return numpy.ones(_check_shape("Ones", shape), dtype=numpy.dtype(dtype or "float32"))


class Constant(Initializer):
    """Every element equal to ``value``.

    Args:
        value: a Python number.
    """

    def __init__(self, value=0.0):
        if not isinstance(value, (int, float, numpy.number)) or isinstance(value, bool):
            raise TypeError(f"Constant initializer expects a number, received value={value!r}.")
        self.value = float(value)

    def __call__(self, shape, dtype="float32"):
        return numpy.full(_check_shape("Constant", shape), self.value, dtype=numpy.dtype(dtype or "float32"))

    def get_config(self):
        return {"value": self.value}


class Identity(Initializer):
    """``gain`` times the identity matrix (2-D shapes only; rectangular ok).

    Args:
        gain: multiplicative factor.
    """

    def __init__(self, gain=1.0):
        self.gain = float(gain)

    def __call__(self, shape, dtype="float32"):
        shape = _check_shape("Identity", shape)
        if len(shape) != 2:
            raise ValueError(f"Identity initializer needs a 2-D shape, received shape={shape} of rank {len(shape)}.")
        return (self.gain * numpy.eye(*shape)).astype(numpy.dtype(dtype or "float32"))

    def get_config(self):
        return {"gain": self.gain}


class _FromArray(Initializer):
    """Initial values given directly as an array (shape must match)."""

    def __init__(self, values):
        self.values = values

    def __call__(self, shape, dtype="float32"):
        shape = _check_shape("initializer", shape)
        if tuple(self.values.shape) != shape:
            raise ValueError(
                f"An array used as initializer has shape {tuple(self.values.shape)}, "
                f"but the weight needs shape {shape}."
            )
        return self.values.astype(numpy.dtype(dtype or "float32"))
