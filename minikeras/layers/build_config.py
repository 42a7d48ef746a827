"""Keras 3's ``get_build_config`` / ``build_from_config``: what a saved
layer records to be built again before its weights are read.

A layer saves ``{"input_shape": ...}`` (the shape its ``build`` received)
and is built from it on load; a layer whose ``build`` needs more than a
shape (keras.io's serialization guide builds with an initializer name)
overrides both methods, and saving and loading call the overrides.
"""

__all__ = []  # methods of Layer


class BuildConfig:
    """``get_build_config`` and ``build_from_config`` of ``Layer``."""

    def get_build_config(self):
        """What to save to build this layer again: ``{"input_shape": shape}``
        once built from a shape, None before."""
        shape = getattr(self, "_build_input_shape", None)
        return None if shape is None else {"input_shape": shape}

    def build_from_config(self, config):
        """Build from ``get_build_config()``'s output (nothing when empty)."""
        shape = (config or {}).get("input_shape")
        if shape is None:
            return
        shape = [tuple(item) for item in shape] if shape and isinstance(shape[0], (list, tuple)) else tuple(shape)
        self.build(shape)
        self._build_input_shape = shape
        self.built = True


def overrides(layer, method):
    """Whether ``layer``'s class defines its own ``get_build_config`` or
    ``build_from_config`` (a user's, which saving and loading then call)."""
    return getattr(type(layer), method) is not getattr(BuildConfig, method)


def build_from_saved(layer, build_config):
    """Build a layer just made from a saved config with the file's
    ``build_config``, as Keras's deserialization does: the layer's own
    ``build_from_config`` when it has one, else ``build(input_shape)``."""
    if layer.built or not build_config:
        return
    layer.build_from_config(build_config)
    if overrides(layer, "build_from_config"):
        layer.built = True
