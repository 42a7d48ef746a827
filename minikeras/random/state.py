"""Save and restore every random stream training draws from.

:func:`get_state` and :func:`set_state` capture and restore the shuffling
stream, the host stream, each device's stream and the layers' own seeded
streams, so that a model saved with its optimizer resumes bit for bit (see
``saving/random_state.py``).
"""
from minikeras.device import get_device
from minikeras.random.seed_generator import SeedGenerator
from minikeras.random.streams import _state, generator, host_rng, shuffle_rng

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
