"""The library's random streams: one seed, one generator per device, the host streams.

``minikeras.random.seed(n)`` resets every device's generator; each logical
device draws from its own stream (seeded from ``n`` and the device), so the
numbers a device produces do not depend on what other devices drew. The
host streams (weight initializers, augmentation, ``fit``'s shuffling) are
reset by the same seed. ``normal``/``uniform`` here draw from the device
stream; ``minikeras.random``'s add Keras's ``seed=`` argument on top.
"""
import threading

import numpy

from minikeras.backend.dtypes import as_numpy_dtype
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


def shuffle_rng():
    """The generator ``fit`` shuffles with: one stream across ``fit`` calls,
    reset by :func:`seed`, saved and restored with the model so that a
    resumed run sees the permutations an uninterrupted one would."""
    state = _host_state.get("shuffle")
    if state is None or state[0] != _state["epoch"]:
        with _lock:
            _host_state["shuffle"] = state = (_state["epoch"], host_generator(salt=17))
    return state[1]


def host_generator(salt=0):
    """A NumPy generator seeded from the library seed (for host-side work
    such as shuffling), or from fresh entropy when no seed was given."""
    base = _state["seed"]
    return numpy.random.default_rng(None if base is None else [base, 7919, salt])


def _draw(method, shape, dtype, device, *args):
    from minikeras.autograd.tensor import from_array

    target = get_device(device) if device is not None else placement_device()
    rng = generator(target)
    dtype = as_numpy_dtype(dtype)
    size = tuple(shape) if not isinstance(shape, int) else (shape,)
    with target.activate():
        data = getattr(target, method)(rng, size, *args).astype(dtype, copy=False)
    return from_array(data, target)


def normal(shape, mean=0.0, stddev=1.0, dtype="float32", device=None):
    """Samples from N(mean, stddev^2) as a Tensor (``standard_normal *
    stddev + mean`` on GPUs: ``cupy.random.Generator`` has no ``normal``)."""
    return _draw("normal", shape, dtype, device, mean, stddev)


def uniform(shape, minval=0.0, maxval=1.0, dtype="float32", device=None):
    """Samples from U[minval, maxval) as a Tensor."""
    return _draw("uniform", shape, dtype, device, minval, maxval)
