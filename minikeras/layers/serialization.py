"""``keras.layers.serialize`` / ``deserialize``: a layer as plain data and back.

The dict has Keras's shape (``module``, ``class_name``, ``config``,
``registered_name``); classes resolve only against minikeras's layers, the
registered ones and ``custom_objects`` (``get_layer_class``), so data never
names code to import.
"""
from minikeras.layers.base import Layer, get_layer_class, layer_from_config

__all__ = ["serialize", "deserialize"]


def serialize(layer):
    """``{"module", "class_name", "config", "registered_name"}`` for ``layer``.

    Raises:
        TypeError: ``layer`` is not a Layer.
    """
    if not isinstance(layer, Layer):
        raise TypeError(f"layers.serialize expects a Layer, received {type(layer).__name__}.")
    library = type(layer).__module__.startswith("minikeras.")
    return {"module": "keras.layers" if library else type(layer).__module__, "class_name": type(layer).__name__,
            "config": layer.get_config(), "registered_name": None if library else type(layer).__name__}


def deserialize(config, custom_objects=None):
    """A new layer from ``serialize``'s output (or ``{"class_name", "config"}``).

    Raises:
        ValueError: a malformed config or an unknown class name.
    """
    if not isinstance(config, dict) or "class_name" not in config:
        raise ValueError(f"layers.deserialize expects a dict with 'class_name' and 'config', received {config!r:.200}.")
    name = config.get("registered_name") or config["class_name"]
    try:
        cls = get_layer_class(name, custom_objects)
    except ValueError:
        cls = get_layer_class(config["class_name"], custom_objects)
    return layer_from_config(cls, dict(config.get("config") or {}), custom_objects)
