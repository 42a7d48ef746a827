"""SimpleRNN: ``h = activation(x_t @ kernel + h @ recurrent_kernel + bias)``."""
from minikeras import ops
from minikeras.autograd import Function
from minikeras.layers.rnn_base import RecurrentBase, activate, batch_major, time_major, times_derivative

__all__ = ["SimpleRNN"]


class _SimpleRNNSequence(Function):
    """A whole SimpleRNN sequence as one node, with back-propagation through time.

    Inputs: x (N, T, F), kernel, recurrent_kernel, bias (or None), h0 (or
    None). Outputs: (sequence (N, T, u) when ``return_sequences``,) last h.
    Keeps the input (for the kernel's gradient) and every h.
    """

    def __init__(self, kind, go_backwards, return_sequences):
        self.kind, self.go_backwards, self.return_sequences = kind, go_backwards, return_sequences

    def forward(self, x, kernel, recurrent_kernel, bias, h0):
        xp = self.device.xp
        batch, steps, features = x.shape
        units = recurrent_kernel.shape[0]
        inputs = time_major(xp, x, self.go_backwards)
        projected = inputs.reshape(steps * batch, features) @ kernel
        if bias is not None:
            projected += bias
        projected = projected.reshape(steps, batch, units)
        hidden = xp.empty((steps + 1, batch, units), dtype=projected.dtype)
        hidden[0] = 0 if h0 is None else h0
        for t in range(steps):
            xp.add(projected[t], hidden[t] @ recurrent_kernel, out=hidden[t + 1])
            activate(xp, self.kind, hidden[t + 1])
        needs = self.needs_input_grad
        self.save_for_backward(inputs if needs[1] else None, kernel if needs[0] else None, recurrent_kernel, hidden)
        last = hidden[steps].copy()
        if self.return_sequences:
            return xp.ascontiguousarray(hidden[1:].transpose(1, 0, 2)), last
        return last

    def backward(self, *grads):
        xp = self.device.xp
        inputs, kernel, recurrent_kernel, hidden = self.saved
        sequence_grad = grads[0].transpose(1, 0, 2) if self.return_sequences else None
        steps, batch, units = hidden.shape[0] - 1, hidden.shape[1], hidden.shape[2]
        grad_pre = xp.empty((steps, batch, units), dtype=hidden.dtype)
        dh = xp.array(grads[-1], dtype=hidden.dtype)
        recurrent_t = recurrent_kernel.T
        for t in range(steps - 1, -1, -1):
            if sequence_grad is not None:
                dh += sequence_grad[t]
            g = grad_pre[t]
            g[...] = dh
            times_derivative(xp, self.kind, g, hidden[t + 1])
            dh = g @ recurrent_t
        flat = grad_pre.reshape(steps * batch, units)
        needs = self.needs_input_grad
        grad_x = grad_kernel = grad_recurrent = grad_bias = None
        if needs[0]:
            grad_x = batch_major(xp, (flat @ kernel.T).reshape(steps, batch, -1), self.go_backwards)
        if needs[1]:
            grad_kernel = inputs.reshape(steps * batch, -1).T @ flat
        if needs[2]:
            grad_recurrent = hidden[:steps].reshape(steps * batch, units).T @ flat
        if needs[3]:
            grad_bias = flat.sum(axis=0)
        return grad_x, grad_kernel, grad_recurrent, grad_bias, dh if needs[4] else None


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
        function = _SimpleRNNSequence(kinds[0], self.go_backwards, self.return_sequences)
        outputs = function.apply(inputs, self.kernel, self.recurrent_kernel, self.bias, states[0])
        if self.return_sequences:
            return outputs[0], [outputs[1]]
        return outputs, [outputs]

    def _step(self, step_input, states, recurrent_mask, context):
        (h,) = states
        if recurrent_mask is not None:
            h = h * recurrent_mask
        h = self.activation(step_input + ops.matmul(h, self.recurrent_kernel))
        return h, [h]
