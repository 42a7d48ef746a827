"""``keras.layers.serialize`` / ``deserialize``: a layer as plain data and back.

As in Keras, these are ``saving.serialize_keras_object`` /
``deserialize_keras_object`` for layers: the dict has Keras's shape
(``module``, ``class_name``, ``config``, ``registered_name``, and
``build_config`` once built), a class registered with
``register_keras_serializable`` is written under its ``"package>name"``,
and the layers (or other Keras objects) a custom ``get_config`` returns are
serialized with it, at any depth. Classes resolve only against minikeras's
layers, the registered ones and ``custom_objects``, so data never names code
to import.
"""
from minikeras.layers.base import Layer

__all__ = ["serialize", "deserialize"]


def serialize(layer):
    """``{"module", "class_name", "config", "registered_name"}`` for ``layer``.

    Raises:
        TypeError: ``layer`` is not a Layer.
    """
    if not isinstance(layer, Layer):
        raise TypeError(f"layers.serialize expects a Layer, received {type(layer).__name__}.")
    from minikeras.saving.serialization_lib import serialize_keras_object

    return serialize_keras_object(layer)


def deserialize(config, custom_objects=None):
    """A new layer from ``serialize``'s output (or ``{"class_name", "config"}``).

    Example (keras.io's serialization guide: a layer holding other layers):
        >>> @classmethod
        ... def from_config(cls, config):
        ...     config["first_layer"] = keras.layers.deserialize(config["first_layer"])
        ...     return cls(**config)

    Raises:
        ValueError: a malformed config, an unknown class name, or a config
            that is not a layer's.
    """
    if not isinstance(config, dict) or "class_name" not in config:
        raise ValueError(f"layers.deserialize expects a dict with 'class_name' and 'config', received {config!r:.200}.")
    from minikeras.saving.serialization_lib import deserialize_keras_object

    layer = deserialize_keras_object(config, custom_objects=custom_objects, source="the layer config")
    if not isinstance(layer, Layer):
        raise ValueError(f"layers.deserialize expects a layer's config, received one of a "
                         f"{type(layer).__name__} ({config['class_name']!r}).")
    return layer
