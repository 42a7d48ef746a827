"""keras.layers.Bidirectional: a recurrent layer run both ways, outputs merged."""
from minikeras import ops
from minikeras.layers.base import Layer
from minikeras.layers.core.wrapper import _check_wrapped, _deserialize, _serialize

__all__ = ["Bidirectional"]


def _remove_prefix(name, prefix):
    return name[len(prefix):] if name.startswith(prefix) else name


# ---------------------------------------------------------- Bidirectional
class Bidirectional(Layer):
    """Run a recurrent layer forwards and backwards over the sequence and
    merge the two outputs.

    The forward and backward layers are fresh copies made from ``layer``'s
    config (as in Keras, ``layer``'s own weights are not reused), named
    ``forward_<name>`` and ``backward_<name>``; the backward copy has
    ``go_backwards`` flipped. Weights, in order: the forward layer's, then
    the backward layer's.

    Args:
        layer: a recurrent layer (LSTM, GRU, SimpleRNN) or any layer with
            ``go_backwards``, ``return_sequences`` and ``return_state``.
        merge_mode: "concat" (default), "sum", "ave", "mul", or None (a list
            ``[forward, backward]``).
        weights: optional initial weights (forward then backward), applied
            when the layer is built.
        backward_layer: optional layer for the backward direction; it must
            have the opposite ``go_backwards`` and the same
            ``return_sequences`` and ``return_state``.
        **kwargs: base Layer arguments; dtype defaults to ``layer``'s.

    Call arguments:
        inputs: ``(batch, timesteps, features)``.
        initial_state: optional list: the first half for the forward layer,
            the second half for the backward one.
        training: passed on to both layers.

    With ``return_sequences`` the backward output is reversed back to the
    input's time order before merging. With ``return_state`` the call
    returns ``[output, forward states..., backward states...]``.

    Example:
        >>> Bidirectional(LSTM(8, return_sequences=True))(np.zeros((4, 10, 3), "float32")).shape
        (4, 10, 16)
    """

    _merge_modes = ("concat", "sum", "ave", "mul", None)

    def __init__(self, layer, merge_mode="concat", weights=None, backward_layer=None, **kwargs):
        _check_wrapped("Bidirectional", layer)
        if backward_layer is not None:
            _check_wrapped("Bidirectional", backward_layer, "backward_layer")
        if merge_mode not in self._merge_modes:
            raise ValueError(
                f"Bidirectional: merge_mode must be one of {self._merge_modes}, received {merge_mode!r}."
            )
        for attribute in ("go_backwards", "return_sequences", "return_state"):
            if not hasattr(layer, attribute):
                raise ValueError(
                    f"Bidirectional needs a recurrent layer (with `{attribute}`), received {type(layer).__name__}."
                )
        kwargs.setdefault("dtype", layer.dtype_policy)  # inputs are cast to the wrapped layer's compute dtype
        super().__init__(**kwargs)
        config = layer.get_config()
        config["name"] = "forward_" + _remove_prefix(layer.name, "forward_")
        self.forward_layer = type(layer).from_config(config)
        if backward_layer is None:
            config = layer.get_config()
            config["name"] = "backward_" + _remove_prefix(layer.name, "backward_")
            config["go_backwards"] = not layer.go_backwards
            backward_layer = type(layer).from_config(config)
        self.backward_layer = backward_layer
        if self.forward_layer.go_backwards == self.backward_layer.go_backwards:
            raise ValueError(
                "Bidirectional: the forward and backward layers must have different go_backwards, received "
                f"{self.forward_layer.go_backwards} for both."
            )
        for attribute in ("return_sequences", "return_state"):
            forward, backward = getattr(self.forward_layer, attribute), getattr(self.backward_layer, attribute)
            if forward != backward:
                raise ValueError(
                    f"Bidirectional: the forward and backward layers must have the same {attribute}, received "
                    f"{forward} (forward) and {backward} (backward)."
                )
        self.merge_mode = merge_mode
        if layer.return_sequences:
            # Keras: masked steps of a returned sequence are zeros, so the
            # reversed backward half lines up with the forward one.
            for part in (self.forward_layer, self.backward_layer):
                part.zero_output_for_mask = True
        self.return_sequences = layer.return_sequences
        self.return_state = layer.return_state
        self._initial_weights = list(weights) if weights is not None else None

    def build(self, input_shape):
        for layer in (self.forward_layer, self.backward_layer):
            if not layer.built:
                layer.build(input_shape)
                layer.built = True
        self.built = True
        if self._initial_weights is not None:
            self.set_weights(self._initial_weights)
            self._initial_weights = None

    def call(self, inputs, initial_state=None, mask=None, training=None):
        forward_state = backward_state = None
        if initial_state is not None:
            initial_state = list(initial_state) if isinstance(initial_state, (list, tuple)) else [initial_state]
            if len(initial_state) % 2:
                raise ValueError(
                    f"Layer '{self.name}' expects an even number of initial states (forward ones, then backward "
                    f"ones), received {len(initial_state)}."
                )
            half = len(initial_state) // 2
            forward_state, backward_state = initial_state[:half], initial_state[half:]
        forward = self._run(self.forward_layer, inputs, forward_state, training, mask)
        backward = self._run(self.backward_layer, inputs, backward_state, training, mask)
        states = []
        if self.return_state:
            states = list(forward[1:]) + list(backward[1:])
            forward, backward = forward[0], backward[0]
        if self.return_sequences:
            backward = ops.getitem(backward, (slice(None), slice(None, None, -1)))
        if self.merge_mode == "concat":
            output = ops.concatenate([forward, backward], axis=-1)
        elif self.merge_mode == "sum":
            output = forward + backward
        elif self.merge_mode == "ave":
            output = (forward + backward) * 0.5
        elif self.merge_mode == "mul":
            output = forward * backward
        else:
            output = [forward, backward]
        if self.return_state:
            return (output if isinstance(output, list) else [output]) + states
        return output

    @staticmethod
    def _run(layer, inputs, initial_state, training, mask=None):
        extra = {} if mask is None else {"mask": mask}
        if initial_state is None:
            return layer(inputs, training=training, **extra)
        return layer(inputs, initial_state=initial_state, training=training, **extra)

    def compute_mask(self, inputs, previous_mask):
        """The input's mask on returned sequences (each output of merge_mode=None); none on states."""
        if isinstance(previous_mask, (list, tuple)):
            previous_mask = previous_mask[0]
        output_mask = previous_mask if self.return_sequences else None
        output_masks = [output_mask, output_mask] if self.merge_mode is None else [output_mask]
        if self.return_state:
            state_count = getattr(self.forward_layer, "state_count", 1)
            return output_masks + [None] * (2 * state_count)
        return output_masks if self.merge_mode is None else output_mask

    def compute_output_shape(self, input_shape):
        shape = self.forward_layer.compute_output_shape(input_shape)
        states = []
        if self.return_state:
            shape, states = shape[0], list(shape[1:])
        shape = tuple(shape)
        if self.merge_mode == "concat":
            output = [shape[:-1] + (None if shape[-1] is None else 2 * shape[-1],)]
        elif self.merge_mode is None:
            output = [shape, shape]
        else:
            output = [shape]
        if self.return_state:
            return output + states + states
        return output if self.merge_mode is None else output[0]

    def get_config(self):
        return {**super().get_config(), "layer": _serialize(self.forward_layer), "merge_mode": self.merge_mode,
                "backward_layer": _serialize(self.backward_layer)}

    @classmethod
    def from_config(cls, config, custom_objects=None):
        config = dict(config)
        config["layer"] = _deserialize(config["layer"], custom_objects)
        if config.get("backward_layer") is not None:
            config["backward_layer"] = _deserialize(config["backward_layer"], custom_objects)
        return cls(**config)
