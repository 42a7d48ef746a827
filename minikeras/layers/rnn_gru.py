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
from minikeras.autograd import Function
from minikeras.layers.rnn_base import RecurrentBase, _fused_kind, activate, batch_major, time_major, times_derivative

__all__ = ["GRU"]


class _GRUSequence(Function):
    """A whole GRU sequence as one node, with back-propagation through time.

    Inputs: x (N, T, F), kernel, recurrent_kernel, bias (or None), h0 (or
    None). Outputs: (sequence (N, T, u) when ``return_sequences``,) last h.
    Keeps the input (for the kernel's gradient), the activated gates z, r,
    hh, every h, and per step the recurrent part of the candidate
    (``h @ recurrent_kernel_h + bias``, or ``r * h`` when not reset_after).
    """

    def __init__(self, kind, recurrent_kind, reset_after, go_backwards, return_sequences):
        self.kind, self.recurrent_kind, self.reset_after = kind, recurrent_kind, reset_after
        self.go_backwards, self.return_sequences = go_backwards, return_sequences

    def forward(self, x, kernel, recurrent_kernel, bias, h0):
        xp = self.device.xp
        batch, steps, features = x.shape
        units = recurrent_kernel.shape[0]
        u2 = 2 * units
        kind, recurrent_kind, reset_after = self.kind, self.recurrent_kind, self.reset_after
        inputs = time_major(xp, x, self.go_backwards)
        gates = inputs.reshape(steps * batch, features) @ kernel
        recurrent_bias = None
        if bias is not None:
            gates += bias[0] if reset_after else bias
            recurrent_bias = bias[1] if reset_after else None
        gates = gates.reshape(steps, batch, 3 * units)
        hidden = xp.empty((steps + 1, batch, units), dtype=gates.dtype)
        hidden[0] = 0 if h0 is None else h0
        candidate_part = xp.empty((steps, batch, units), dtype=gates.dtype)
        product = xp.empty((batch, units), dtype=gates.dtype)
        gate_kernel = recurrent_kernel if reset_after else recurrent_kernel[:, :u2]
        candidate_kernel = recurrent_kernel[:, u2:]
        for t in range(steps):
            z, h = gates[t], hidden[t]
            inner = h @ gate_kernel
            if recurrent_bias is not None:
                inner += recurrent_bias
            z[:, :u2] += inner[:, :u2]
            activate(xp, recurrent_kind, z[:, :u2])
            update, reset, candidate = z[:, :units], z[:, units:u2], z[:, u2:]
            if reset_after:
                candidate_part[t] = inner[:, u2:]
                xp.multiply(reset, inner[:, u2:], out=product)
            else:
                xp.multiply(reset, h, out=candidate_part[t])
                product = candidate_part[t] @ candidate_kernel
            candidate += product
            activate(xp, kind, candidate)
            # h = z * h + (1 - z) * hh = hh + z * (h - hh)
            xp.subtract(h, candidate, out=product)
            product *= update
            xp.add(candidate, product, out=hidden[t + 1])
        needs = self.needs_input_grad
        self.save_for_backward(inputs if needs[1] else None, kernel if needs[0] else None, recurrent_kernel,
                               gates, hidden, candidate_part)
        last = hidden[steps].copy()
        if self.return_sequences:
            return xp.ascontiguousarray(hidden[1:].transpose(1, 0, 2)), last
        return last

    def backward(self, *grads):
        xp = self.device.xp
        inputs, kernel, recurrent_kernel, gates, hidden, candidate_part = self.saved
        sequence_grad = grads[0].transpose(1, 0, 2) if self.return_sequences else None
        steps, batch, width = gates.shape
        units, u2 = width // 3, 2 * width // 3
        kind, recurrent_kind, reset_after = self.kind, self.recurrent_kind, self.reset_after
        # Gradients of the input-side pre-activations, and of the recurrent
        # product's outputs (they differ in the candidate third).
        grad_gates = xp.empty_like(gates)
        grad_inner = xp.empty_like(gates) if reset_after else None
        dh = xp.array(grads[-1], dtype=gates.dtype)
        gate_kernel_t = (recurrent_kernel if reset_after else recurrent_kernel[:, :u2]).T
        candidate_kernel_t = recurrent_kernel[:, u2:].T
        recurrent_grad = xp.empty((batch, units), dtype=gates.dtype)
        for t in range(steps - 1, -1, -1):
            if sequence_grad is not None:
                dh += sequence_grad[t]
            z, g, h = gates[t], grad_gates[t], hidden[t]
            update, reset, candidate = z[:, :units], z[:, units:u2], z[:, u2:]
            g_update, g_reset, g_candidate = g[:, :units], g[:, units:u2], g[:, u2:]
            xp.subtract(h, candidate, out=g_update)
            g_update *= dh
            times_derivative(xp, recurrent_kind, g_update, update)
            xp.subtract(1.0, update, out=g_candidate)
            g_candidate *= dh
            times_derivative(xp, kind, g_candidate, candidate)
            dh *= update
            if reset_after:
                xp.multiply(g_candidate, candidate_part[t], out=g_reset)
                times_derivative(xp, recurrent_kind, g_reset, reset)
                inner = grad_inner[t]
                inner[:, :u2] = g[:, :u2]
                xp.multiply(g_candidate, reset, out=inner[:, u2:])
                dh += inner @ gate_kernel_t
            else:
                reset_product = g_candidate @ candidate_kernel_t  # d(r * h)
                xp.multiply(reset_product, h, out=g_reset)
                times_derivative(xp, recurrent_kind, g_reset, reset)
                xp.multiply(reset_product, reset, out=recurrent_grad)
                dh += recurrent_grad
                dh += g[:, :u2] @ gate_kernel_t
        flat = grad_gates.reshape(steps * batch, width)
        needs = self.needs_input_grad
        grad_x = grad_kernel = grad_recurrent = grad_bias = None
        if needs[0]:
            grad_x = batch_major(xp, (flat @ kernel.T).reshape(steps, batch, -1), self.go_backwards)
        if needs[1]:
            grad_kernel = inputs.reshape(steps * batch, -1).T @ flat
        previous = hidden[:steps].reshape(steps * batch, units)
        if reset_after:
            inner_flat = grad_inner.reshape(steps * batch, width)
            if needs[2]:
                grad_recurrent = previous.T @ inner_flat
            if needs[3]:
                grad_bias = xp.stack([flat.sum(axis=0), inner_flat.sum(axis=0)])
        else:
            if needs[2]:
                grad_recurrent = xp.empty_like(recurrent_kernel)
                grad_recurrent[:, :u2] = previous.T @ flat[:, :u2]
                grad_recurrent[:, u2:] = candidate_part.reshape(steps * batch, units).T @ flat[:, u2:]
            if needs[3]:
                grad_bias = flat.sum(axis=0)
        return grad_x, grad_kernel, grad_recurrent, grad_bias, dh if needs[4] else None


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
        function = _GRUSequence(kinds[0], kinds[1], self.reset_after, self.go_backwards, self.return_sequences)
        outputs = function.apply(inputs, self.kernel, self.recurrent_kernel, self.bias, states[0])
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
