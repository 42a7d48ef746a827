"""RNN: run any cell over a sequence (Keras's ``keras.layers.RNN``).

The cell is a layer with ``state_size`` and ``call(inputs, states,
training=None) -> (output, new_states)``: one of minikeras's cells or a
user's own. The loop composes ops step by step and autograd differentiates
it; the SimpleRNN/LSTM/GRU layers remain the fast path for the built-in
cells (one fused node per sequence).
"""
from minikeras import ops
from minikeras.layers.base import Layer
from minikeras.layers.core.wrapper import _deserialize, _serialize
from minikeras.layers.input_spec import InputSpec
from minikeras.layers.rnn.rnn_state import StatefulStates

__all__ = ["RNN"]


def _state_sizes(cell):
    size = cell.state_size
    sizes = list(size) if isinstance(size, (list, tuple)) else [size]
    for entry in sizes:
        if isinstance(entry, bool) or not isinstance(entry, int) or entry <= 0:
            raise ValueError(f"RNN: cell '{cell.name}' has state_size {size!r}; expected a positive int or a list "
                             "of them.")
    return sizes


class RNN(StatefulStates, Layer):
    """Loop ``cell`` over the timesteps of ``(batch, timesteps, features)``.

    Args:
        cell: a cell layer (``LSTMCell(32)``, a user cell with
            ``state_size`` and ``call(inputs, states)``).
        return_sequences: return every step's output, not just the last.
        return_state: also return the final states: ``[output, *states]``.
        go_backwards: process the sequence in reverse.
        stateful: carry the final states of each batch into the next
            (fixed batch size; ``reset_state()`` zeros them; see rnn/rnn_state.py).
        unroll: accepted and ignored (the loop is always a Python loop).
        zero_output_for_mask: with a mask and return_sequences, give masked
            steps zero output instead of repeating the previous one.
        **kwargs: base Layer arguments.

    Call arguments:
        inputs: ``(batch, timesteps, features)``.
        initial_state: optional list of states (zeros by default, or the
            cell's ``get_initial_state``).
        mask: optional ``(batch, timesteps)`` bool; masked steps keep the
            states unchanged (taken from Embedding(mask_zero)/Masking).
        training: passed to the cell (dropout).
    """

    def __init__(self, cell, return_sequences=False, return_state=False, go_backwards=False, stateful=False,
                 unroll=False, zero_output_for_mask=False, **kwargs):
        super().__init__(**kwargs)
        if isinstance(cell, (list, tuple)):  # as Keras: a list of cells runs as one StackedRNNCells
            from minikeras.layers.rnn.stacked_rnn_cells import StackedRNNCells

            cell = StackedRNNCells(cell)
        if not isinstance(cell, Layer) or not hasattr(cell, "state_size") or not hasattr(cell, "call"):
            raise ValueError(f"RNN expects a cell layer with `state_size` and `call(inputs, states)`, "
                             f"received {cell!r}.")
        self.cell = cell
        self.return_sequences = bool(return_sequences)
        self.return_state = bool(return_state)
        self.go_backwards = bool(go_backwards)
        self.stateful = bool(stateful)
        self.unroll = bool(unroll)
        self.zero_output_for_mask = bool(zero_output_for_mask)
        self.input_spec = InputSpec(ndim=3)

    def build(self, input_shape):
        if input_shape is None or len(input_shape) != 3 or input_shape[-1] is None:
            raise ValueError(f"Layer '{self.name}' (RNN) expects inputs of shape (batch, timesteps, features) with "
                             f"known features, received input shape {input_shape}.")
        if not self.cell.built:
            self.cell.build((input_shape[0], input_shape[-1]))
            self.cell.built = True
        self.built = True

    def _initial_states(self, initial_state, inputs):
        batch = inputs.shape[0]
        sizes = _state_sizes(self.cell)
        if initial_state is None:
            if hasattr(self.cell, "get_initial_state"):
                states = self.cell.get_initial_state(batch_size=batch)
                states = list(states) if isinstance(states, (list, tuple)) else [states]
            else:
                states = [ops.zeros((batch, size), dtype=inputs.dtype, device=inputs.device) for size in sizes]
        else:
            states = list(initial_state) if isinstance(initial_state, (list, tuple)) else [initial_state]
            states = [self._convert_input(state) for state in states]
        if len(states) != len(sizes) or any(tuple(s.shape) != (batch, size) for s, size in zip(states, sizes)):
            raise ValueError(f"Layer '{self.name}' (RNN): the cell expects states of shapes "
                             f"{[(batch, size) for size in sizes]}, received {[tuple(s.shape) for s in states]}.")
        return states

    def call(self, inputs, initial_state=None, mask=None, training=None):
        batch, steps = inputs.shape[0], inputs.shape[1]
        if steps == 0:
            raise ValueError(f"Layer '{self.name}' received a sequence with 0 timesteps (shape {inputs.shape}).")
        states = self._initial_states(self._stateful_initial_states(initial_state, batch), inputs)
        if isinstance(mask, (list, tuple)):
            mask = mask[0]
        if mask is not None:
            mask = self._convert_input(mask)
            if tuple(mask.shape) != (batch, steps):
                raise ValueError(f"Layer '{self.name}' (RNN) expects a mask of shape (batch, timesteps) = "
                                 f"{(batch, steps)}, received shape {tuple(mask.shape)}.")
            mask = ops.expand_dims(ops.not_equal(mask, 0) if mask.dtype.kind != "b" else mask, -1)
        if hasattr(self.cell, "reset_dropout_mask"):
            self.cell.reset_dropout_mask()
        outputs, previous_output = [], None
        for t in (range(steps - 1, -1, -1) if self.go_backwards else range(steps)):
            output, new_states = self.cell(inputs[:, t], states, training=training)
            new_states = list(new_states) if isinstance(new_states, (list, tuple)) else [new_states]
            if mask is not None:
                keep = mask[:, t]
                if previous_output is None:
                    previous_output = ops.zeros_like(output)
                sequence_output = ops.where(keep, output, 0.0 if self.zero_output_for_mask else previous_output)
                output = ops.where(keep, output, previous_output)
                new_states = [ops.where(keep, new, old) for new, old in zip(new_states, states)]
                previous_output = output
            else:
                sequence_output = output
            states = new_states
            if self.return_sequences:
                outputs.append(sequence_output)
        result = ops.stack(outputs, axis=1) if self.return_sequences else output
        self._keep_final_states(states)
        return [result] + list(states) if self.return_state else result

    def compute_mask(self, inputs, previous_mask):
        if isinstance(previous_mask, (list, tuple)):
            previous_mask = previous_mask[0]
        output_mask = previous_mask if self.return_sequences else None
        if self.return_state:
            return [output_mask] + [None] * len(_state_sizes(self.cell))
        return output_mask

    def get_config(self):
        return {**super().get_config(), "cell": _serialize(self.cell), "return_sequences": self.return_sequences,
                "return_state": self.return_state, "go_backwards": self.go_backwards, "stateful": self.stateful,
                "unroll": self.unroll, "zero_output_for_mask": self.zero_output_for_mask}

    @classmethod
    def from_config(cls, config, custom_objects=None):
        config = dict(config)
        config["cell"] = _deserialize(config["cell"], custom_objects)
        return cls(**config)
