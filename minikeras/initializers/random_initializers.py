"""Random initializers with a fixed distribution: RandomNormal,
RandomUniform, TruncatedNormal, Orthogonal.

They draw on the host in float64 and cast at the end, so one seed gives the
same weights on every device.
"""

__all__ = ["RandomNormal", "RandomUniform", "TruncatedNormal", "Orthogonal"]

import math

import numpy

from minikeras import random
from minikeras.initializers.base import Initializer, _check_seed, _check_shape, _float_dtype, _positive


# The standard deviation of a unit normal truncated to [-2, 2]; dividing by it
# makes a truncated draw have the requested standard deviation (Keras' value).
_TRUNCATED_STDDEV = 0.87962566103423978


class RandomInitializer(Initializer):
    """Base of the random initializers: holds the seed, gives the generator."""

    def __init__(self, seed=None):
        self.seed = _check_seed(seed)

    def _host_rng(self):
        # A seeded initializer repeats its values on every call (Keras 3
        # semantics); an unseeded one advances the library's host stream.
        if self.seed is not None:
            return numpy.random.default_rng(self.seed)
        return random.host_rng()

    def get_config(self):
        return {"seed": self.seed}


class RandomNormal(RandomInitializer):
    """Normal distribution ``N(mean, stddev**2)``.

    Args:
        mean: the mean.
        stddev: the standard deviation (Keras default 0.05).
        seed: optional int; the same values on every call when given.
    """

    def __init__(self, mean=0.0, stddev=0.05, seed=None):
        self.mean, self.stddev = float(mean), _positive("RandomNormal", "stddev", stddev)
        super().__init__(seed)

    def __call__(self, shape, dtype="float32"):
        shape, dtype = _check_shape("RandomNormal", shape), _float_dtype("RandomNormal", dtype)
        return self._host_rng().normal(self.mean, self.stddev, size=shape).astype(dtype)

    def get_config(self):
        return {"mean": self.mean, "stddev": self.stddev, "seed": self.seed}


class RandomUniform(RandomInitializer):
    """Uniform distribution on ``[minval, maxval)``.

    Args:
        minval, maxval: the bounds (Keras defaults -0.05 and 0.05).
        seed: optional int; the same values on every call when given.
    """

    def __init__(self, minval=-0.05, maxval=0.05, seed=None):
        if not float(minval) < float(maxval):
            raise ValueError(f"RandomUniform needs minval < maxval, received minval={minval}, maxval={maxval}.")
        self.minval, self.maxval = float(minval), float(maxval)
        super().__init__(seed)

    def __call__(self, shape, dtype="float32"):
        shape, dtype = _check_shape("RandomUniform", shape), _float_dtype("RandomUniform", dtype)
        return self._host_rng().uniform(self.minval, self.maxval, size=shape).astype(dtype)

    def get_config(self):
        return {"minval": self.minval, "maxval": self.maxval, "seed": self.seed}


def _truncated_normal(generator, mean, stddev, shape):
    """Normal samples redrawn until all lie within two standard deviations
    (Keras' truncation), in float64."""
    size = math.prod(shape)
    values = generator.normal(0.0, 1.0, size=size)
    outside = numpy.flatnonzero(numpy.abs(values) > 2.0)
    while outside.size:
        values[outside] = generator.normal(0.0, 1.0, size=outside.size)
        outside = outside[numpy.abs(values[outside]) > 2.0]
    values *= stddev
    values += mean
    return values.reshape(shape)


class TruncatedNormal(RandomInitializer):
    """Normal distribution truncated to ``[mean - 2*stddev, mean + 2*stddev]``.

    Args:
        mean: the mean.
        stddev: the standard deviation before truncation (Keras default 0.05).
        seed: optional int; the same values on every call when given.
    """

    def __init__(self, mean=0.0, stddev=0.05, seed=None):
        self.mean, self.stddev = float(mean), _positive("TruncatedNormal", "stddev", stddev)
        super().__init__(seed)

    def __call__(self, shape, dtype="float32"):
        shape, dtype = _check_shape("TruncatedNormal", shape), _float_dtype("TruncatedNormal", dtype)
        return _truncated_normal(self._host_rng(), self.mean, self.stddev, shape).astype(dtype)

    def get_config(self):
        return {"mean": self.mean, "stddev": self.stddev, "seed": self.seed}


class Orthogonal(RandomInitializer):
    """An orthogonal matrix (times ``gain``), from the QR decomposition of a
    normal random matrix.

    Shapes of rank > 2 are treated as ``(prod(shape[:-1]), shape[-1])``
    matrices and reshaped back. With fewer rows than columns the rows are
    orthonormal, else the columns.

    Args:
        gain: multiplicative factor.
        seed: optional int; the same values on every call when given.
    """

    def __init__(self, gain=1.0, seed=None):
        self.gain = float(gain)
        super().__init__(seed)

    def __call__(self, shape, dtype="float32"):
        shape, dtype = _check_shape("Orthogonal", shape), _float_dtype("Orthogonal", dtype)
        if len(shape) < 2:
            raise ValueError(
                f"Orthogonal initializer needs a shape of rank >= 2, received shape={shape} of rank {len(shape)}."
            )
        rows, cols = math.prod(shape[:-1]), shape[-1]
        matrix = self._host_rng().normal(0.0, 1.0, size=(max(rows, cols), min(rows, cols)))
        q, r = numpy.linalg.qr(matrix)
        # Multiplying by the signs of diag(r) makes the result uniformly
        # distributed over orthogonal matrices (Mezzadri, 2007).
        q *= numpy.where(numpy.diag(r) < 0, -1.0, 1.0)
        if rows < cols:
            q = q.T
        return (self.gain * q).reshape(shape).astype(dtype)

    def get_config(self):
        return {"gain": self.gain, "seed": self.seed}
