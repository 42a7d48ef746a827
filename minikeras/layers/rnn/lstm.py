"""LSTM (Hochreiter & Schmidhuber, 1997), Keras's formulation and weights.

Per step, with gates packed i, f, c, o along the last axis of ``kernel``
(features, 4u), ``recurrent_kernel`` (u, 4u) and ``bias`` (4u,)::

    z = x_t @ kernel + h @ recurrent_kernel + bias
    i, f, o = recurrent_activation(z_i, z_f, z_o); g = activation(z_c)
    c = f * c + i * g
    h = o * activation(c)
"""
import numpy

from minikeras import activations, ops
from minikeras.layers.rnn.rnn_base import RecurrentBase, _fused_kind, host_array

__all__ = ["LSTM"]


class _UnitForgetBias:
    """Keras's unit_forget_bias: the bias initializer for the i, c, o gates
    and ones for the forget gate."""

    def __init__(self, initializer, units):
        self.initializer, self.units = initializer, units

    def __call__(self, shape, dtype="float32"):
        u = self.units
        return numpy.concatenate([
            host_array(self.initializer((u,), dtype=dtype)),
            numpy.ones((u,), dtype=dtype),
            host_array(self.initializer((2 * u,), dtype=dtype)),
        ]).astype(dtype, copy=False)


class LSTM(RecurrentBase):
    """Long short-term memory layer over ``(batch, timesteps, features)``.

    Args:
        units: size of the hidden and cell states.
        activation: for the candidate and the cell output (default "tanh").
        recurrent_activation: for the i, f, o gates (default "sigmoid").
        use_bias: add ``bias`` (4 * units,).
        unit_forget_bias: initialise the forget gate's bias to 1 (default True).
        kernel_initializer, recurrent_initializer, bias_initializer:
            default glorot_uniform, orthogonal, zeros.
        kernel_regularizer, recurrent_regularizer, bias_regularizer,
            activity_regularizer, kernel_constraint, recurrent_constraint,
            bias_constraint: as in Keras.
        dropout: rate of input features dropped in training (one mask per
            sequence, shared by every step).
        recurrent_dropout: rate of hidden units dropped before the recurrent
            product in training (one mask per sequence; this uses the slower
            step-by-step path).
        return_sequences: return every step's h ``(batch, timesteps, units)``
            rather than the last ``(batch, units)``.
        return_state: also return the final states: ``[output, h, c]``.
        go_backwards: process the sequence in reverse (a returned sequence
            is then in processing order, as Keras).
        stateful: carry the final states of each batch into the next
            (fixed batch size; ``reset_state()`` zeros them; see rnn/rnn_state.py).
        unroll: accepted and ignored.
        seed: recorded in the config (dropout draws from minikeras.random).
        **kwargs: base Layer arguments.

    Call arguments:
        inputs: ``(batch, timesteps, features)``.
        initial_state: optional ``[h0, c0]``, each ``(batch, units)``.
        training: enables dropout.

    Weights, as Keras: kernel (features, 4u), recurrent_kernel (u, 4u),
    bias (4u,), gates ordered i, f, c, o.

    Example:
        >>> LSTM(8)(np.zeros((32, 10, 4), "float32")).shape
        (32, 8)
    """

    gate_count = 4
    state_count = 2

    def __init__(self, units, activation="tanh", recurrent_activation="sigmoid", use_bias=True,
                 unit_forget_bias=True, **kwargs):
        kwargs.pop("use_cudnn", None)  # Keras 3 argument; there is no cuDNN path here
        kwargs.pop("implementation", None)
        super().__init__(units, activation=activation, use_bias=use_bias, **kwargs)
        self.recurrent_activation = activations.get(recurrent_activation)
        self.unit_forget_bias = bool(unit_forget_bias)

    def _bias_initializer(self):
        if self.unit_forget_bias:
            return _UnitForgetBias(self.bias_initializer, self.units)
        return self.bias_initializer

    def _fused_kinds(self):
        return (_fused_kind(self.activation), _fused_kind(self.recurrent_activation))

    def _run_fused(self, inputs, states, kinds):
        outputs = ops.lstm_sequence(inputs, self.kernel, self.recurrent_kernel, self.bias, states[0], states[1],
                                    kinds[0], kinds[1], self.go_backwards, self.return_sequences)
        return outputs[0], list(outputs[-2:])

    def _step(self, step_input, states, recurrent_mask, context):
        h, c = states
        if recurrent_mask is not None:
            h = h * recurrent_mask
        z = step_input + ops.matmul(h, self.recurrent_kernel)
        z_i, z_f, z_c, z_o = ops.split(z, 4, axis=-1)
        i = self.recurrent_activation(z_i)
        f = self.recurrent_activation(z_f)
        c = f * c + i * self.activation(z_c)
        h = self.recurrent_activation(z_o) * self.activation(c)
        return h, [h, c]

    def get_config(self):
        return {**super().get_config(), "recurrent_activation": activations.serialize(self.recurrent_activation),
                "unit_forget_bias": self.unit_forget_bias}
