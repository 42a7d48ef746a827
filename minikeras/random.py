"""Random numbers: one seed for the library, one generator per device.

``minikeras.random.seed(n)`` resets every device's generator; each logical
device draws from its own stream (seeded from ``n`` and the device), so the
numbers a device produces do not depend on what other devices drew.

:func:`get_state` and :func:`set_state` capture and restore every generator
training draws from (the shuffling stream, each device's stream, the
layers' own seeded streams), so that a model saved with its optimizer
resumes bit for bit (see ``saving/random_state.py``).
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


# Keras 3's seeded functions live in their own module; exported here.
from minikeras._keras_random import SeedGenerator, dropout, randint, shuffle, with_seed_argument  # noqa: E402,F401

normal, uniform = with_seed_argument(normal, uniform)  # Keras's seed= argument
from minikeras._keras_random_distributions import (  # noqa: E402,F401
    beta, binomial, categorical, gamma, truncated_normal,
)


# ------------------------------------------------------------- saved state
_STATE_VERSION = 1


def _generator_state(rng):
    """A generator's state as plain JSON-able data, or None when its kind
    does not expose one (CuPy's generators keep theirs on the device)."""
    state = getattr(getattr(rng, "bit_generator", None), "state", None)
    return state if isinstance(state, dict) else None


def _restore_generator(rng, state, what):
    try:
        rng.bit_generator.state = state
    except (TypeError, ValueError, KeyError, AttributeError) as error:
        raise ValueError(f"Cannot restore the random generator state of {what}: {error}") from None


def get_state(layers=()):
    """The state of every generator training uses, as JSON-able data.

    Args:
        layers: the layers whose own seeded generators to include (e.g.
            ``walk_layers(model)``), keyed by layer name.

    Returns:
        ``{"version", "shuffle", "devices": {name: state}, "layers":
        {layer name: {device name: state}}}``; generators never drawn from
        are left out, and so are those whose state cannot be read (GPU).
    """
    from minikeras.device import registry

    devices = {}
    for kind_devices in registry.initialize().values():
        for device in kind_devices:
            if device.rng is not None and device.rng[0] == _state["epoch"]:
                state = _generator_state(device.rng[1])
                if state is not None:
                    devices[device.name] = state
    layer_states = {}
    for layer in layers:
        states = _layer_states(layer)
        if states:
            layer_states[layer.name] = states
    return {"version": _STATE_VERSION, "shuffle": _generator_state(shuffle_rng()),
            "host": _generator_state(host_rng()), "devices": devices, "layers": layer_states}


def _layer_states(layer):
    """A layer's own streams: seeded noise generators per device (keyed by
    device name), a seeded host generator (augmentation, key ``"host"``) and
    SeedGenerator attributes (key ``"seed_generator:<attribute>"``)."""
    from minikeras._keras_random import SeedGenerator

    states = {}
    for device, rng in (getattr(layer, "_generators", None) or {}).items():
        states[device.name] = _generator_state(rng)
    host = getattr(layer, "_rng", None)
    if host is not None:
        states["host"] = _generator_state(host)
    for attribute, value in vars(layer).items():
        if isinstance(value, SeedGenerator):
            states[f"seed_generator:{attribute}"] = list(value.state)
    return {key: value for key, value in states.items() if value is not None}


def set_state(state, layers=()):
    """Restore what :func:`get_state` returned (for ``layers`` by name).

    Raises:
        ValueError: ``state`` is malformed or from an unknown version.
    """
    from minikeras.device import registry

    if not isinstance(state, dict) or state.get("version") != _STATE_VERSION:
        raise ValueError(f"Unknown random generator state (expected version {_STATE_VERSION}).")
    shuffle, devices, layer_states = state.get("shuffle"), state.get("devices"), state.get("layers")
    if not isinstance(devices, dict) or not isinstance(layer_states, dict):
        raise ValueError("Malformed random generator state: 'devices' and 'layers' must be mappings.")
    if shuffle is not None:
        _restore_generator(shuffle_rng(), shuffle, "the shuffling stream")
    if state.get("host") is not None:
        _restore_generator(host_rng(), state["host"], "the host stream (augmentation)")
    existing = {device.name for kind_devices in registry.initialize().values() for device in kind_devices}
    for name, device_state in devices.items():
        if name in existing:  # a device of the saving machine that this one lacks has no stream to resume
            _restore_generator(generator(name), device_state, f"device {name}")
    by_name = {layer.name: layer for layer in layers}
    for layer_name, states in layer_states.items():
        layer = by_name.get(layer_name)
        if layer is not None and isinstance(states, dict):
            _restore_layer(layer, states, existing)


def _restore_layer(layer, states, existing):
    from minikeras._keras_random import SeedGenerator

    for key, saved in states.items():
        what = f"layer {layer.name!r} ({key})"
        if key == "host":
            if getattr(layer, "_rng", None) is not None:
                _restore_generator(layer._rng, saved, what)
        elif isinstance(key, str) and key.startswith("seed_generator:"):
            generator_object = getattr(layer, key.split(":", 1)[1], None)
            if isinstance(generator_object, SeedGenerator):
                if not (isinstance(saved, list) and len(saved) == 2 and all(type(v) is int for v in saved)):
                    raise ValueError(f"Malformed SeedGenerator state for {what}: {saved!r:.80}.")
                if saved[0] == generator_object.seed:
                    generator_object._count = saved[1]
        elif key in existing and hasattr(layer, "_generator"):
            # A device of the saving machine that this one lacks is skipped.
            rng = layer._generator(get_device(key))
            if rng is not None:
                _restore_generator(rng, saved, what)
