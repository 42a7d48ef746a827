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

One family per module: ``base`` (the Initializer class, fans, argument
checks), ``constant_initializers``, ``random_initializers`` and
``variance_scaling`` (Glorot, He, Lecun); this package adds Keras's lowercase
aliases and the name registry (``get``, ``serialize``, ``deserialize``).

Example:
    >>> from minikeras import initializers
    >>> init = initializers.get("he_normal")
    >>> kernel = init((784, 128), dtype="float32")
    >>> initializers.serialize(initializers.RandomNormal(stddev=0.1))
    {'class_name': 'RandomNormal', 'config': {'mean': 0.0, 'stddev': 0.1, 'seed': None}}
"""

__all__ = [
    "Initializer", "Zeros", "Ones", "Constant", "RandomNormal", "RandomUniform", "TruncatedNormal",
    "VarianceScaling", "GlorotUniform", "GlorotNormal", "HeUniform", "HeNormal", "LecunUniform",
    "LecunNormal", "Orthogonal", "Identity", "compute_fans", "get", "serialize", "deserialize",
    "zeros", "ones", "constant", "random_normal", "random_uniform", "truncated_normal", "variance_scaling",
    "glorot_uniform", "glorot_normal", "he_uniform", "he_normal", "lecun_uniform", "lecun_normal",
    "orthogonal", "identity",
]
__all__ += ["IdentityInitializer", "OrthogonalInitializer", "STFT", "STFTInitializer", "stft"]

import re

import numpy

from minikeras._registry import ObjectRegistry
from minikeras.initializers.base import Initializer, compute_fans
from minikeras.initializers.constant_initializers import Constant, Identity, Ones, Zeros, _FromArray
from minikeras.initializers.stft import STFT
from minikeras.initializers.random_initializers import Orthogonal, RandomNormal, RandomUniform, TruncatedNormal
from minikeras.initializers.variance_scaling import (
    GlorotNormal, GlorotUniform, HeNormal, HeUniform, LecunNormal, LecunUniform, VarianceScaling,
)


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
IdentityInitializer = Identity
OrthogonalInitializer = Orthogonal
STFTInitializer = stft = STFT

_CLASSES = (
    Zeros, Ones, Constant, RandomNormal, RandomUniform, TruncatedNormal, VarianceScaling, GlorotUniform,
    GlorotNormal, HeUniform, HeNormal, LecunUniform, LecunNormal, Orthogonal, Identity, STFT,
)
_BY_NAME = {cls.__name__: cls for cls in _CLASSES}
_BY_NAME.update({_snake_case(cls.__name__): cls for cls in _CLASSES})
_BY_NAME.update({"zero": Zeros, "one": Ones, "normal": RandomNormal, "uniform": RandomUniform,
                 "IdentityInitializer": Identity, "OrthogonalInitializer": Orthogonal})
_BY_NAME.update({"STFTInitializer": STFT, "stft": STFT})


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
