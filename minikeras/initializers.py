"""Weight initializers, with Keras names, defaults and configs.

An initializer is a callable ``init(shape, dtype="float32") -> numpy array``.
Random ones draw on the host, in float64, and cast at the end, so that one
seed gives the same initial weights whether the model is built on the CPU
or a GPU (``Layer.add_weight`` moves the array to the weight's device).

Randomness: without ``seed``, values come from ``minikeras.random.host_rng()``
(the library stream, reset by ``minikeras.random.seed``), so successive calls
differ. With ``seed=n``, each call uses a fresh generator seeded with ``n``
and so returns the same values every time (as Keras 3 does).

Fans are computed as Keras does: a 2-D ``(in, out)`` kernel has
``fan_in=in, fan_out=out``; a convolution kernel ``(*window, in, out)`` has
``fan_in = prod(window) * in`` and ``fan_out = prod(window) * out``.

Example:
    >>> from minikeras import initializers
    >>> init = initializers.get("he_normal")
    >>> kernel = init((784, 128), dtype="float32")
    >>> initializers.serialize(initializers.RandomNormal(stddev=0.1))
    {'class_name': 'RandomNormal', 'config': {'mean': 0.0, 'stddev': 0.1, 'seed': None}}
"""
import math
import re

import numpy

from minikeras import random
from minikeras._registry import Configurable, ObjectRegistry

__all__ = [
    "Initializer", "Zeros", "Ones", "Constant", "RandomNormal", "RandomUniform", "TruncatedNormal",
    "VarianceScaling", "GlorotUniform", "GlorotNormal", "HeUniform", "HeNormal", "LecunUniform",
    "LecunNormal", "Orthogonal", "Identity", "compute_fans", "get", "serialize", "deserialize",
    "zeros", "ones", "constant", "random_normal", "random_uniform", "truncated_normal", "variance_scaling",
    "glorot_uniform", "glorot_normal", "he_uniform", "he_normal", "lecun_uniform", "lecun_normal",
    "orthogonal", "identity",
]

# The standard deviation of a unit normal truncated to [-2, 2]; dividing by it
# makes a truncated draw have the requested standard deviation (Keras' value).
_TRUNCATED_STDDEV = 0.87962566103423978


def compute_fans(shape):
    """``(fan_in, fan_out)`` of a weight shape, as Keras computes them.

    Args:
        shape: the weight's shape. Scalars give ``(1, 1)``, vectors
            ``(n, n)``, matrices ``(rows, cols)``; higher ranks are read as
            convolution kernels ``(*window, in, out)``.

    Returns:
        A pair of ints.
    """
    shape = tuple(int(size) for size in shape)
    if len(shape) < 1:
        return 1, 1
    if len(shape) == 1:
        return shape[0], shape[0]
    if len(shape) == 2:
        return shape[0], shape[1]
    receptive_field = math.prod(shape[:-2])
    return shape[-2] * receptive_field, shape[-1] * receptive_field


def _check_shape(name, shape):
    if isinstance(shape, (int, numpy.integer)):
        shape = (shape,)
    try:
        shape = tuple(int(size) for size in shape)
    except TypeError:
        raise TypeError(f"{name}: shape must be a tuple of ints, received {shape!r}.") from None
    if any(size < 0 for size in shape):
        raise ValueError(f"{name}: shape sizes must be non-negative, received {shape}.")
    return shape


def _float_dtype(name, dtype):
    dtype = numpy.dtype(dtype or "float32")
    if dtype.kind != "f":
        raise ValueError(f"{name}: random values need a floating dtype, received dtype={dtype.name}.")
    return dtype


def _check_seed(seed):
    if seed is None:
        return None
    if isinstance(seed, bool) or not isinstance(seed, (int, numpy.integer)) or seed < 0:
        raise ValueError(f"An initializer seed must be None or a non-negative int, received seed={seed!r}.")
    return int(seed)


class Initializer(Configurable):
    """Base class: ``init(shape, dtype="float32")`` returns a NumPy array.

    Subclasses implement ``__call__`` and ``get_config`` (the constructor
    arguments); ``from_config`` rebuilds an equal initializer.
    """

    def __call__(self, shape, dtype="float32"):  # pragma: no cover - abstract
        raise NotImplementedError


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


class RandomInitializer(Initializer):
    """Base of the random initializers: holds the seed, gives the generator."""

    def __init__(self, seed=None):
        self.seed = _check_seed(seed)

    def _generator(self):
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
        return self._generator().normal(self.mean, self.stddev, size=shape).astype(dtype)

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
        return self._generator().uniform(self.minval, self.maxval, size=shape).astype(dtype)

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
        return _truncated_normal(self._generator(), self.mean, self.stddev, shape).astype(dtype)

    def get_config(self):
        return {"mean": self.mean, "stddev": self.stddev, "seed": self.seed}


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
        generator = self._generator()
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
        matrix = self._generator().normal(0.0, 1.0, size=(max(rows, cols), min(rows, cols)))
        q, r = numpy.linalg.qr(matrix)
        # Multiplying by the signs of diag(r) makes the result uniformly
        # distributed over orthogonal matrices (Mezzadri, 2007).
        q *= numpy.where(numpy.diag(r) < 0, -1.0, 1.0)
        if rows < cols:
            q = q.T
        return (self.gain * q).reshape(shape).astype(dtype)

    def get_config(self):
        return {"gain": self.gain, "seed": self.seed}


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


def _positive(class_name, argument, value):
    try:
        value = float(value)
    except (TypeError, ValueError):
        raise TypeError(f"{class_name}: {argument} must be a number, received {value!r}.") from None
    if not value > 0 or not math.isfinite(value):
        raise ValueError(f"{class_name}: {argument} must be a positive number, received {argument}={value}.")
    return value


def _snake_case(name):
    return re.sub(r"([a-z])([A-Z])", r"\1_\2", name).lower()


# Keras' lowercase names are aliases of the classes.
zeros = Zeros
ones = Ones
constant = Constant
random_normal = RandomNormal
random_uniform = RandomUniform
truncated_normal = TruncatedNormal
variance_scaling = VarianceScaling
glorot_uniform = GlorotUniform
glorot_normal = GlorotNormal
he_uniform = HeUniform
he_normal = HeNormal
lecun_uniform = LecunUniform
lecun_normal = LecunNormal
orthogonal = Orthogonal
identity = Identity

_CLASSES = (
    Zeros, Ones, Constant, RandomNormal, RandomUniform, TruncatedNormal, VarianceScaling, GlorotUniform,
    GlorotNormal, HeUniform, HeNormal, LecunUniform, LecunNormal, Orthogonal, Identity,
)
_BY_NAME = {cls.__name__: cls for cls in _CLASSES}
_BY_NAME.update({_snake_case(cls.__name__): cls for cls in _CLASSES})
_BY_NAME.update({"zero": Zeros, "one": Ones, "normal": RandomNormal, "uniform": RandomUniform,
                 "IdentityInitializer": Identity, "OrthogonalInitializer": Orthogonal})


_REGISTRY = ObjectRegistry(
    "initializer", Initializer, _BY_NAME, listed=lambda names: sorted(name for name in names if name[0].islower())
)


def serialize(initializer):
    """The config of an initializer: ``{"class_name": ..., "config": {...}}``.

    A plain function serialises to its name (restore it with
    ``deserialize(name, custom_objects={name: fn})``).
    """
    return _REGISTRY.serialize(initializer)


def deserialize(config, custom_objects=None):
    """Rebuild an initializer from :func:`serialize`'s output (or a name).

    Args:
        config: a name, or a dict with "class_name" and "config".
        custom_objects: optional ``{name: class or function}`` for user ones.
    """
    return _REGISTRY.deserialize(config, custom_objects)


def get(identifier):
    """An initializer from a name, a config dict, an instance, a class, a
    callable ``(shape, dtype) -> array``, or an array to copy.

    Args:
        identifier: e.g. ``"glorot_uniform"``, ``"HeNormal"``,
            ``{"class_name": "RandomNormal", "config": {"stddev": 0.1}}``,
            ``RandomNormal(stddev=0.1)``, a function, or a NumPy array.

    Returns:
        A callable ``init(shape, dtype="float32")``, or None for None.

    Raises:
        ValueError: an unknown name (the message lists the known ones).
    """
    if isinstance(identifier, numpy.ndarray) or hasattr(identifier, "__array_interface__"):
        return _FromArray(numpy.asarray(identifier))
    return _REGISTRY.get(identifier)


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
