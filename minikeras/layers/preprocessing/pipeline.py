"""Pipeline: preprocessing layers applied one after another (Keras's
``keras.layers.Pipeline``), usable inside or outside a model."""
from minikeras.layers.base import Layer
from minikeras.layers.core.wrapper import _deserialize, _serialize
from minikeras.layers.keras_mask import get_keras_mask

__all__ = ["Pipeline"]


class Pipeline(Layer):
    """Apply ``layers`` in order. Unlike Sequential it is a layer, and its
    ``training`` flag defaults to True, so augmentation layers in it act
    when it is used on data outside a model (as in Keras).

    Args:
        layers: the layers, in order.
        name: the layer name.

    Example:
        >>> augment = Pipeline([RandomFlip(), RandomRotation(0.1)])  # doctest: +SKIP
        >>> images = augment(images)  # doctest: +SKIP
    """

    def __init__(self, layers, name=None, **kwargs):
        super().__init__(name=name, **kwargs)
        if not isinstance(layers, (list, tuple)) or not all(isinstance(layer, Layer) for layer in layers):
            raise ValueError(f"Pipeline expects a list of layers, received {layers!r}.")
        self._pipeline_layers = list(layers)

    @property
    def layers(self):
        """The layers, in order."""
        return self._pipeline_layers

    def call(self, inputs, training=True, mask=None):
        if training is None:  # not given (and no outer training flag): Keras's default for a Pipeline
            training = True
        outputs = inputs
        for layer in self._pipeline_layers:
            outputs = layer(inputs, training=training) if mask is None else layer(inputs, training=training,
                                                                                   mask=mask)
            mask = get_keras_mask(outputs) if hasattr(outputs, "shape") else None
            inputs = outputs
        return outputs

    def compute_output_shape(self, input_shape):
        for layer in self._pipeline_layers:
            input_shape = layer.compute_output_shape(input_shape)
        return input_shape

    def get_config(self):
        return {"layers": [_serialize(layer) for layer in self._pipeline_layers], "name": self.name}

    @classmethod
    def from_config(cls, config, custom_objects=None):
        layers = config.get("layers")
        if not isinstance(layers, (list, tuple)):
            raise ValueError("`Pipeline` config must contain a `layers` key mapping to a list of serialized layers. "
                             f"Received config with layers={layers}.")
        config = {**config, "layers": [_deserialize(spec, custom_objects) for spec in layers]}
        return cls(**config)
