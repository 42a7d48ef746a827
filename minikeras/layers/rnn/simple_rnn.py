"""SimpleRNN: ``h = activation(x_t @ kernel + h @ recurrent_kernel + bias)``."""
from minikeras import ops
from minikeras.layers.rnn.rnn_base import RecurrentBase

__all__ = ["SimpleRNN"]


class SimpleRNN(RecurrentBase):
    """Fully-connected recurrent layer over ``(batch, timesteps, features)``.

    Args:
        units: size of the hidden state.
        activation: default "tanh".
        use_bias: add ``bias`` (units,).
        Other arguments (initializers, regularizers, constraints, dropout,
        recurrent_dropout, return_sequences, return_state, go_backwards,
        stateful, unroll, seed, base Layer arguments): as LSTM.

    Call arguments:
        inputs: ``(batch, timesteps, features)``.
        initial_state: optional ``[h0]`` (or h0), ``(batch, units)``.
        training: enables dropout.

    Weights, as Keras: kernel (features, u), recurrent_kernel (u, u), bias (u,).
    With return_state the call returns ``[output, h]``.
    """

    gate_count = 1
    state_count = 1

    def _run_fused(self, inputs, states, kinds):
        outputs = ops.simple_rnn_sequence(inputs, self.kernel, self.recurrent_kernel, self.bias, states[0], kinds[0],
                                          self.go_backwards, self.return_sequences)
        if self.return_sequences:
            return outputs[0], [outputs[1]]
        return outputs, [outputs]

    def _step(self, step_input, states, recurrent_mask, context):
        (h,) = states
        if recurrent_mask is not None:
            h = h * recurrent_mask
        h = self.activation(step_input + ops.matmul(h, self.recurrent_kernel))
        return h, [h]
