"""VarianceScaling and its fixed-argument family: GlorotUniform/Normal,
HeUniform/Normal, LecunUniform/Normal (Keras's defaults and configs).
"""

__all__ = ["VarianceScaling", "GlorotUniform", "GlorotNormal", "HeUniform", "HeNormal", "LecunUniform", "LecunNormal"]

import math

from minikeras.initializers.base import _check_shape, _float_dtype, _positive, compute_fans
from minikeras.initializers.random_initializers import RandomInitializer, _TRUNCATED_STDDEV, _truncated_normal


_MODES = ("fan_in", "fan_out", "fan_avg")
_DISTRIBUTIONS = ("truncated_normal", "untruncated_normal", "uniform")


class VarianceScaling(RandomInitializer):
    """Samples scaled to the weight's fans (the family behind Glorot, He, LeCun).

    With ``n`` = fan_in, fan_out or their average (``mode``), the values have
    variance ``scale / n``: a truncated normal of standard deviation
    ``sqrt(scale / n)`` after truncation, an untruncated normal, or a uniform
    on ``[-limit, limit]`` with ``limit = sqrt(3 * scale / n)``.

    Args:
        scale: positive scaling factor.
        mode: "fan_in", "fan_out" or "fan_avg".
        distribution: "truncated_normal" (also "normal"), "untruncated_normal"
            or "uniform".
        seed: optional int; the same values on every call when given.
    """

    def __init__(self, scale=1.0, mode="fan_in", distribution="truncated_normal", seed=None):
        self.scale = _positive("VarianceScaling", "scale", scale)
        if mode not in _MODES:
            raise ValueError(f"VarianceScaling: mode must be one of {list(_MODES)}, received mode={mode!r}.")
        if distribution == "normal":
            distribution = "truncated_normal"
        if distribution not in _DISTRIBUTIONS:
            raise ValueError(
                f"VarianceScaling: distribution must be one of {list(_DISTRIBUTIONS)}, "
                f"received distribution={distribution!r}."
            )
        self.mode, self.distribution = mode, distribution
        super().__init__(seed)

    def __call__(self, shape, dtype="float32"):
        shape, dtype = _check_shape(type(self).__name__, shape), _float_dtype(type(self).__name__, dtype)
        fan_in, fan_out = compute_fans(shape)
        fan = {"fan_in": fan_in, "fan_out": fan_out, "fan_avg": (fan_in + fan_out) / 2.0}[self.mode]
        variance = self.scale / max(1.0, fan)
        generator = self._host_rng()
        if self.distribution == "truncated_normal":
            values = _truncated_normal(generator, 0.0, math.sqrt(variance) / _TRUNCATED_STDDEV, shape)
        elif self.distribution == "untruncated_normal":
            values = generator.normal(0.0, math.sqrt(variance), size=shape)
        else:
            limit = math.sqrt(3.0 * variance)
            values = generator.uniform(-limit, limit, size=shape)
        return values.astype(dtype)

    def get_config(self):
        return {"scale": self.scale, "mode": self.mode, "distribution": self.distribution, "seed": self.seed}


class _FixedVarianceScaling(VarianceScaling):
    """A VarianceScaling with fixed arguments: only the seed is configurable."""

    _arguments = {}

    def __init__(self, seed=None):
        super().__init__(seed=seed, **self._arguments)

    def get_config(self):
        return {"seed": self.seed}


class GlorotUniform(_FixedVarianceScaling):
    """Uniform on ``[-limit, limit]``, ``limit = sqrt(6 / (fan_in + fan_out))``
    (Keras' default kernel initializer).

    Args:
        seed: optional int; the same values on every call when given.
    """

    _arguments = {"scale": 1.0, "mode": "fan_avg", "distribution": "uniform"}


class GlorotNormal(_FixedVarianceScaling):
    """Truncated normal with ``stddev = sqrt(2 / (fan_in + fan_out))``.

    Args:
        seed: optional int; the same values on every call when given.
    """

    _arguments = {"scale": 1.0, "mode": "fan_avg", "distribution": "truncated_normal"}


class HeUniform(_FixedVarianceScaling):
    """Uniform on ``[-limit, limit]``, ``limit = sqrt(6 / fan_in)``.

    Args:
        seed: optional int; the same values on every call when given.
    """

    _arguments = {"scale": 2.0, "mode": "fan_in", "distribution": "uniform"}


class HeNormal(_FixedVarianceScaling):
    """Truncated normal with ``stddev = sqrt(2 / fan_in)``.

    Args:
        seed: optional int; the same values on every call when given.
    """

    _arguments = {"scale": 2.0, "mode": "fan_in", "distribution": "truncated_normal"}


class LecunUniform(_FixedVarianceScaling):
    """Uniform on ``[-limit, limit]``, ``limit = sqrt(3 / fan_in)``.

    Args:
        seed: optional int; the same values on every call when given.
    """

    _arguments = {"scale": 1.0, "mode": "fan_in", "distribution": "uniform"}


class LecunNormal(_FixedVarianceScaling):
    """Truncated normal with ``stddev = sqrt(1 / fan_in)``.

    Args:
        seed: optional int; the same values on every call when given.
    """

    _arguments = {"scale": 1.0, "mode": "fan_in", "distribution": "truncated_normal"}
