"""GRU (Cho et al., 2014), Keras's formulation and weights.

Gates packed z, r, h along the last axis of ``kernel`` (features, 3u) and
``recurrent_kernel`` (u, 3u). With ``reset_after=True`` (the default, and
cuDNN's convention) ``bias`` is (2, 3u): an input bias and a recurrent bias::

    x_z, x_r, x_h = x_t @ kernel + bias[0]
    r_z, r_r, r_h = h @ recurrent_kernel + bias[1]
    z = recurrent_activation(x_z + r_z); r = recurrent_activation(x_r + r_r)
    hh = activation(x_h + r * r_h)
    h = z * h + (1 - z) * hh

With ``reset_after=False`` the bias is (3u,) and the reset gate applies
before the product: ``hh = activation(x_h + (r * h) @ recurrent_kernel_h)``.
"""
from minikeras import activations, ops
from minikeras.layers.rnn.rnn_base import RecurrentBase, _fused_kind

__all__ = ["GRU"]


class GRU(RecurrentBase):
    """Gated recurrent unit layer over ``(batch, timesteps, features)``.

    Args:
        units: size of the hidden state.
        activation: for the candidate (default "tanh").
        recurrent_activation: for the update and reset gates (default "sigmoid").
        use_bias: add the bias: (2, 3 * units) with reset_after, else (3 * units,).
        reset_after: apply the reset gate after the recurrent product
            (default True, Keras's and cuDNN's convention).
        Other arguments (initializers, regularizers, constraints, dropout,
        recurrent_dropout, return_sequences, return_state, go_backwards,
        stateful, unroll, seed, base Layer arguments): as LSTM.

    Call arguments:
        inputs: ``(batch, timesteps, features)``.
        initial_state: optional ``[h0]`` (or h0), ``(batch, units)``.
        training: enables dropout.

    Weights, as Keras: kernel (features, 3u), recurrent_kernel (u, 3u),
    bias; gates ordered z, r, h. With return_state the call returns
    ``[output, h]``.
    """

    gate_count = 3
    state_count = 1

    def __init__(self, units, activation="tanh", recurrent_activation="sigmoid", use_bias=True, reset_after=True,
                 **kwargs):
        kwargs.pop("use_cudnn", None)  # Keras 3 argument; there is no cuDNN path here
        kwargs.pop("implementation", None)
        super().__init__(units, activation=activation, use_bias=use_bias, **kwargs)
        self.recurrent_activation = activations.get(recurrent_activation)
        self.reset_after = bool(reset_after)

    def _bias_shape(self):
        return (2, 3 * self.units) if self.reset_after else (3 * self.units,)

    def _fused_kinds(self):
        return (_fused_kind(self.activation), _fused_kind(self.recurrent_activation))

    def _run_fused(self, inputs, states, kinds):
        outputs = ops.gru_sequence(inputs, self.kernel, self.recurrent_kernel, self.bias, states[0], kinds[0],
                                   kinds[1], self.reset_after, self.go_backwards, self.return_sequences)
        if self.return_sequences:
            return outputs[0], [outputs[1]]
        return outputs, [outputs]

    def _input_bias(self):
        if self.bias is None or not self.reset_after:
            return self.bias
        return self.bias[0]

    def _step_context(self):
        if self.reset_after:
            return self.recurrent_kernel, None if self.bias is None else self.bias[1]
        return tuple(ops.split(self.recurrent_kernel, [2 * self.units], axis=1))

    def _step(self, step_input, states, recurrent_mask, context):
        (h,) = states
        h_in = h if recurrent_mask is None else h * recurrent_mask
        x_z, x_r, x_h = ops.split(step_input, 3, axis=-1)
        if self.reset_after:
            recurrent_kernel, recurrent_bias = context
            inner = ops.matmul(h_in, recurrent_kernel)
            if recurrent_bias is not None:
                inner = inner + recurrent_bias
            r_z, r_r, r_h = ops.split(inner, 3, axis=-1)
            z = self.recurrent_activation(x_z + r_z)
            r = self.recurrent_activation(x_r + r_r)
            candidate = self.activation(x_h + r * r_h)
        else:
            gate_kernel, candidate_kernel = context
            r_z, r_r = ops.split(ops.matmul(h_in, gate_kernel), 2, axis=-1)
            z = self.recurrent_activation(x_z + r_z)
            r = self.recurrent_activation(x_r + r_r)
            candidate = self.activation(x_h + ops.matmul(r * h_in, candidate_kernel))
        h = z * h + (1.0 - z) * candidate
        return h, [h]

    def get_config(self):
        return {**super().get_config(), "recurrent_activation": activations.serialize(self.recurrent_activation),
                "reset_after": self.reset_after}
