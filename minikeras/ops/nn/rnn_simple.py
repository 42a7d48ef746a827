"""A whole SimpleRNN sequence as one graph node, with back-propagation
through time: ``h = kind(x_t @ kernel + h @ recurrent_kernel + bias)``.
"""
from minikeras.autograd import Function
from minikeras.autograd.function import in_float32
from minikeras.ops.nn.rnn_kernels import (activate, check_settings, input_gradients, operands, sequence_outputs,
                                          time_major, times_derivative)

__all__ = ["simple_rnn_sequence"]



class SimpleRNNSequence(Function):
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
        return sequence_outputs(xp, hidden, self.return_sequences)

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
        grad_x, grad_kernel = input_gradients(xp, needs, flat, inputs, kernel, steps, batch, self.go_backwards)
        grad_recurrent = grad_bias = None
        if needs[2]:
            grad_recurrent = hidden[:steps].reshape(steps * batch, units).T @ flat
        if needs[3]:
            grad_bias = flat.sum(axis=0)
        return grad_x, grad_kernel, grad_recurrent, grad_bias, dh if needs[4] else None


def simple_rnn_sequence(x, kernel, recurrent_kernel, bias, initial_state, activation="tanh",
                        go_backwards=False, return_sequences=False):
    """Run SimpleRNN over ``x`` ``(batch, time, features)``.

    Args:
        x: a float Tensor ``(batch, time, features)``.
        kernel, recurrent_kernel, bias: Keras's weights ``(features, u)``,
            ``(u, u)``, ``(u,)`` (bias may be None).
        initial_state: ``h0`` ``(batch, u)``.
        activation: "tanh", "sigmoid", "relu", "hard_sigmoid" or "linear".
        go_backwards: process the time steps in reverse.
        return_sequences: also return every step's output.

    Returns:
        The last h, or ``(sequence (batch, time, u), last h)``.
    """
    go_backwards, return_sequences = check_settings(
        "simple_rnn_sequence", {"activation": activation},
        {"go_backwards": go_backwards, "return_sequences": return_sequences})
    function = SimpleRNNSequence(activation, go_backwards, return_sequences)
    return in_float32(function, *operands("simple_rnn_sequence", x, kernel, recurrent_kernel, bias, initial_state))
