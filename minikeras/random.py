"""Random numbers: one seed for the library, one generator per device.

``minikeras.random.seed(n)`` resets every device's generator; each logical
device draws from its own stream (seeded from ``n`` and the device), so the
numbers a device produces do not depend on what other devices drew.
"""
import threading

import numpy

from minikeras.device import get_device, placement_device

_state = {"seed": None, "epoch": 0}
_lock = threading.Lock()


def seed(value):
    """Seed every device's generator (and the initializers that use them)."""
    if isinstance(value, bool) or not isinstance(value, (int, numpy.integer)) or value < 0:
        raise ValueError(f"random.seed expects a non-negative int, received {value!r}.")
    with _lock:
        _state["seed"] = int(value)
        _state["epoch"] += 1


def get_seed():
    """The last seed given to :func:`seed`, or None."""
    return _state["seed"]


def generator(device=None):
    """The random generator of ``device`` (default: the current placement).

    A ``numpy.random.Generator`` on the CPU, a ``cupy.random.Generator`` on
    GPUs: draw through :func:`normal`/:func:`uniform`, or use only the
    methods both have (``standard_normal``, ``random``, ``uniform``).
    """
    target = get_device(device) if device is not None else placement_device()
    state = target.rng
    if state is None or state[0] != _state["epoch"]:
        with _lock:
            base = _state["seed"]
            entropy = None if base is None else [base, int(target.device_type == "GPU"), target.index]
            rng = target.new_rng(entropy)
            target.rng = state = (_state["epoch"], rng)
    return state[1]


def host_rng():
    """The library's host NumPy generator: one stream, reset by :func:`seed`.

    Weight initializers draw from it, so that a seed gives the same initial
    weights whatever device the model is built on.
    """
    state = _host_state.get("rng")
    if state is None or state[0] != _state["epoch"]:
        with _lock:
            base = _state["seed"]
            rng = numpy.random.default_rng(None if base is None else [base, 104729])
            _host_state["rng"] = state = (_state["epoch"], rng)
    return state[1]


_host_state = {}


def host_generator(salt=0):
    """A NumPy generator seeded from the library seed (for host-side work
    such as shuffling), or from fresh entropy when no seed was given."""
    base = _state["seed"]
    return numpy.random.default_rng(None if base is None else [base, 7919, salt])


def _draw(method, shape, dtype, device, *args):
    from minikeras.autograd.function import _wrap

    target = get_device(device) if device is not None else placement_device()
    rng = generator(target)
    dtype = numpy.dtype(dtype)
    size = tuple(shape) if not isinstance(shape, int) else (shape,)
    with target.activate():
        data = getattr(target, method)(rng, size, *args).astype(dtype, copy=False)
    return _wrap(data, target, None, 0)


def normal(shape, mean=0.0, stddev=1.0, dtype="float32", device=None):
    """Samples from N(mean, stddev^2) as a Tensor (``standard_normal *
    stddev + mean`` on GPUs: ``cupy.random.Generator`` has no ``normal``)."""
    return _draw("normal", shape, dtype, device, mean, stddev)


def uniform(shape, minval=0.0, maxval=1.0, dtype="float32", device=None):
    """Samples from U[minval, maxval) as a Tensor."""
    return _draw("uniform", shape, dtype, device, minval, maxval)


# Keras 3's seeded functions live in their own module; exported here.
from minikeras._keras_random import SeedGenerator, dropout, randint, shuffle, with_seed_argument  # noqa: E402,F401

normal, uniform = with_seed_argument(normal, uniform)  # Keras's seed= argument
