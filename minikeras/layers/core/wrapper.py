"""keras.layers.Wrapper (the base class of layers that wrap one layer), and how
wrappers write and read the layer they hold.
"""
from minikeras.layers.base import Layer, get_layer_class

__all__ = ["Wrapper"]


def _serialize(layer):
    return {"class_name": type(layer).__name__, "config": layer.get_config()}


def _deserialize(spec, custom_objects=None):
    """A layer from ``{"class_name", "config"}`` (or a Layer, returned as is)."""
    if isinstance(spec, Layer):
        return spec
    if not isinstance(spec, dict) or "class_name" not in spec or "config" not in spec:
        raise ValueError(f"Expected a layer or a layer config {{'class_name': ..., 'config': ...}}, received {spec!r}.")
    layer_class = get_layer_class(spec["class_name"], custom_objects)
    try:
        return layer_class.from_config(dict(spec["config"]), custom_objects=custom_objects)
    except TypeError:
        return layer_class.from_config(dict(spec["config"]))


def _check_wrapped(wrapper, layer, argument="layer"):
    if not isinstance(layer, Layer):
        raise ValueError(f"{wrapper} expects a Layer instance as `{argument}`, received {layer!r}.")


class Wrapper(Layer):
    """Base class of layers that wrap another layer (``self.layer``).

    Args:
        layer: the Layer to wrap.
        **kwargs: base Layer arguments.

    Raises:
        ValueError: ``layer`` is not a Layer.
    """

    def __init__(self, layer, **kwargs):
        if not isinstance(layer, Layer):
            raise ValueError(f"Layer {layer} supplied to Wrapper isn't a supported layer type. Please ensure wrapped "
                             "layer is a valid Keras layer.")
        super().__init__(**kwargs)
        self.layer = layer

    def build(self, input_shape=None):
        if not self.layer.built:
            self.layer.build(input_shape)
            self.layer.built = True
        self.built = True

    def get_config(self):
        return {**super().get_config(), "layer": _serialize(self.layer)}

    @classmethod
    def from_config(cls, config, custom_objects=None):
        config = dict(config)
        layer = _deserialize(config.pop("layer"), custom_objects)
        return cls(layer, **config)
