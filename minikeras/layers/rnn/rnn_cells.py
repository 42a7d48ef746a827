"""RNN cells: SimpleRNNCell, LSTMCell, GRUCell, the one-step forms that
``RNN(cell)`` loops over (and that users subclass or imitate).

Each cell is its layer's class with the sequence loop taken off: the same
arguments, weights (kernel, recurrent_kernel, bias; same shapes, gate
order and initialisers) and step math (``_step``), so a cell and its layer
compute the same thing from the same weights.
"""
from minikeras import ops
from minikeras.backend.dtypes import is_float_dtype
from minikeras.layers.input_spec import InputSpec
from minikeras.layers.rnn.gru import GRU
from minikeras.layers.rnn.lstm import LSTM
from minikeras.layers.rnn.simple_rnn import SimpleRNN

__all__ = ["SimpleRNNCell", "LSTMCell", "GRUCell"]

# Arguments of the sequence layers that a cell does not take (Keras's cells
# reject them too).
_SEQUENCE_ARGUMENTS = ("return_sequences", "return_state", "go_backwards", "stateful", "unroll",
                       "activity_regularizer")


class _CellMixin:
    """One step: ``call(inputs, states, training=None) -> (output, new_states)``."""

    def _init_cell(self, kwargs):
        for argument in _SEQUENCE_ARGUMENTS:
            if argument in kwargs:
                raise TypeError(f"{type(self).__name__} got an unexpected keyword argument '{argument}' (it belongs "
                                f"to the RNN layer, e.g. RNN(cell, {argument}=...)).")
        self._dropout_masks = None

    @property
    def state_size(self):
        """The size of each state (an int, or a list for several states)."""
        return [self.units] * self.state_count if self.state_count > 1 else self.units

    @property
    def output_size(self):
        return self.units

    def build(self, input_shape):
        if input_shape is None or len(input_shape) != 2 or input_shape[-1] is None:
            raise ValueError(f"Layer '{self.name}' ({type(self).__name__}) expects one step of shape "
                             f"(batch, features), received input shape {input_shape}.")
        super().build((input_shape[0], None, input_shape[1]))
        self.input_spec = InputSpec(ndim=2, axes={-1: int(input_shape[-1])})
        self.built = True

    def get_initial_state(self, batch_size=None):
        """Zero states, one ``(batch_size, units)`` Tensor per state."""
        return [ops.zeros((batch_size, self.units), dtype=self.compute_dtype) for _ in range(self.state_count)]

    def reset_dropout_mask(self):
        """Forget the dropout masks, so the next sequence draws new ones
        (``RNN`` calls this before each sequence, as Keras does)."""
        self._dropout_masks = None

    def _masks(self, inputs, training):
        """Input and recurrent dropout masks, drawn once per sequence."""
        if not training or (self.dropout == 0 and self.recurrent_dropout == 0):
            return None, None
        if self._dropout_masks is None or self._dropout_masks[0] != inputs.shape[0]:
            batch = inputs.shape[0]
            input_mask = recurrent_mask = None
            if self.dropout > 0:
                ones = ops.ones((batch, inputs.shape[-1]), dtype=inputs.dtype, device=inputs.device)
                input_mask = ops.dropout(ones, self.dropout)
            if self.recurrent_dropout > 0:
                ones = ops.ones((batch, self.units), dtype=inputs.dtype, device=inputs.device)
                recurrent_mask = ops.dropout(ones, self.recurrent_dropout)
            self._dropout_masks = (batch, input_mask, recurrent_mask)
        return self._dropout_masks[1], self._dropout_masks[2]

    def call(self, inputs, states, training=None):
        if not is_float_dtype(inputs.dtype):
            inputs = ops.cast(inputs, self.compute_dtype)
        states = list(states) if isinstance(states, (list, tuple)) else [states]
        if len(states) != self.state_count:
            raise ValueError(f"Layer '{self.name}' ({type(self).__name__}) expects {self.state_count} state(s), "
                             f"received {len(states)}.")
        input_mask, recurrent_mask = self._masks(inputs, training)
        if input_mask is not None:
            inputs = inputs * input_mask
        projected = ops.matmul(inputs, self.kernel)
        input_bias = self._input_bias()
        if input_bias is not None:
            projected = projected + input_bias
        states = [self._convert_input(state) for state in states]
        output, new_states = self._step(projected, states, recurrent_mask, self._step_context())
        return output, new_states

    def compute_output_shape(self, input_shape):
        return (input_shape[0], self.units)

    def compute_mask(self, inputs, previous_mask):
        return None

    def get_config(self):
        config = super().get_config()
        for argument in _SEQUENCE_ARGUMENTS:
            config.pop(argument, None)
        return config


class SimpleRNNCell(_CellMixin, SimpleRNN):
    """One step of SimpleRNN: ``h = activation(x @ kernel + h @ recurrent_kernel + bias)``.

    Args: as SimpleRNN, without the sequence arguments (return_sequences,
    return_state, go_backwards, stateful, unroll).
    """

    def __init__(self, units, **kwargs):
        self._init_cell(kwargs)
        super().__init__(units, **kwargs)
        self.input_spec = InputSpec(ndim=2)


class LSTMCell(_CellMixin, LSTM):
    """One step of LSTM; states ``[h, c]``. Args: as LSTM without the
    sequence arguments."""

    def __init__(self, units, **kwargs):
        self._init_cell(kwargs)
        super().__init__(units, **kwargs)
        self.input_spec = InputSpec(ndim=2)


class GRUCell(_CellMixin, GRU):
    """One step of GRU (``reset_after=True`` by default); state ``h``.
    Args: as GRU without the sequence arguments."""

    def __init__(self, units, **kwargs):
        self._init_cell(kwargs)
        super().__init__(units, **kwargs)
        self.input_spec = InputSpec(ndim=2)
