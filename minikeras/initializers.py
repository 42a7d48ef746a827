"""Weight initializers (minimal set; being extended)."""
import numpy

from minikeras import random


class Initializer:
    """Base: ``init(shape, dtype) -> numpy array``."""

    def __call__(self, shape, dtype="float32"):
        raise NotImplementedError

    def get_config(self):
        return {}


class Zeros(Initializer):
    def __call__(self, shape, dtype="float32"):
        return numpy.zeros(shape, dtype=dtype)


class Ones(Initializer):
    def __call__(self, shape, dtype="float32"):
        return numpy.ones(shape, dtype=dtype)


class GlorotUniform(Initializer):
    def __call__(self, shape, dtype="float32"):
        fan_in, fan_out = _fans(shape)
        limit = numpy.sqrt(6.0 / max(1.0, fan_in + fan_out))
        return random.host_rng().uniform(-limit, limit, size=shape).astype(dtype)


def _fans(shape):
    if len(shape) < 1:
        return 1, 1
    if len(shape) == 1:
        return shape[0], shape[0]
    if len(shape) == 2:
        return shape[0], shape[1]
    receptive = int(numpy.prod(shape[:-2]))
    return shape[-2] * receptive, shape[-1] * receptive


_NAMES = {"zeros": Zeros, "ones": Ones, "glorot_uniform": GlorotUniform}


def get(identifier):
    if identifier is None:
        return None
    if isinstance(identifier, str):
        try:
            return _NAMES[identifier]()
        except KeyError:
            raise ValueError(f"Unknown initializer '{identifier}'. Known: {sorted(_NAMES)}.") from None
    if callable(identifier):
        return identifier
    raise ValueError(f"Could not interpret initializer {identifier!r}.")
