"""keras.layers.TimeDistributed: a layer applied to every timestep."""
from minikeras import ops
from minikeras.layers.base import Layer
from minikeras.layers.core.wrapper import _check_wrapped, _deserialize, _serialize
from minikeras.layers.input_spec import InputSpec

__all__ = ["TimeDistributed"]


# -------------------------------------------------------- TimeDistributed
class TimeDistributed(Layer):
    """Apply ``layer`` to every timestep of ``(batch, timesteps, ...)``.

    The timesteps are folded into the batch (``(batch * timesteps, ...)``),
    so the layer runs once, with one set of weights shared by every step.

    Args:
        layer: the Layer to apply.
        **kwargs: base Layer arguments; dtype defaults to ``layer``'s.

    Example:
        >>> TimeDistributed(Dense(8))(np.zeros((4, 10, 3), "float32")).shape
        (4, 10, 8)
    """

    supports_masking = True  # the timestep mask passes through, as Keras

    def __init__(self, layer, **kwargs):
        _check_wrapped("TimeDistributed", layer)
        kwargs.setdefault("dtype", layer.dtype_policy)  # inputs are cast to the wrapped layer's compute dtype
        super().__init__(**kwargs)
        self.layer = layer
        self.input_spec = InputSpec(min_ndim=3)

    def _check_rank(self, input_shape):
        if input_shape is None or len(input_shape) < 3:
            raise ValueError(
                f"Layer '{self.name}' (TimeDistributed) expects inputs of rank >= 3 (batch, timesteps, ...), "
                f"received input shape {None if input_shape is None else tuple(input_shape)}."
            )

    def build(self, input_shape):
        self._check_rank(input_shape)
        if not self.layer.built:
            self.layer.build((None,) + tuple(input_shape[2:]))
            self.layer.built = True
        self.built = True

    def call(self, inputs, training=None):
        self._check_rank(inputs.shape)
        batch, steps = inputs.shape[0], inputs.shape[1]
        folded = ops.reshape(inputs, (batch * steps,) + tuple(inputs.shape[2:]))
        outputs = self.layer(folded, training=training)
        return ops.reshape(outputs, (batch, steps) + tuple(outputs.shape[1:]))

    def compute_output_shape(self, input_shape):
        inner = self.layer.compute_output_shape((None,) + tuple(input_shape[2:]))
        if inner is None:
            return None
        return (input_shape[0], input_shape[1]) + tuple(inner[1:])

    def get_config(self):
        return {**super().get_config(), "layer": _serialize(self.layer)}

    @classmethod
    def from_config(cls, config, custom_objects=None):
        config = dict(config)
        config["layer"] = _deserialize(config["layer"], custom_objects)
        return cls(**config)
