"""A whole LSTM sequence as one graph node, with back-propagation through
time (Keras's formulation: gates i, f, c, o packed along the last axis).
"""
from minikeras.autograd import Function
from minikeras.autograd.function import in_float32
from minikeras.ops.nn.rnn_kernels import (activate, check_settings, input_gradients, operands, time_major,
                                          times_derivative)

__all__ = ["lstm_sequence"]



class LSTMSequence(Function):
    """A whole LSTM sequence as one node, with back-propagation through time.

    Inputs: x (N, T, F), kernel, recurrent_kernel, bias (or None), h0, c0
    (or None for zeros). Outputs: (sequence (N, T, u) when
    ``return_sequences``,) last h, last c. Keeps the input (for the kernel's
    gradient), the activated gates, every h and c, and activation(c).
    """

    whole_block = True  # the default activations' fast path (see forward); tests switch it off

    def __init__(self, kind, recurrent_kind, go_backwards, return_sequences):
        self.kind, self.recurrent_kind = kind, recurrent_kind
        self.go_backwards, self.return_sequences = go_backwards, return_sequences

    def forward(self, x, kernel, recurrent_kernel, bias, h0, c0):
        xp = self.device.xp
        batch, steps, features = x.shape
        units = recurrent_kernel.shape[0]
        u1, u2, u3 = units, 2 * units, 3 * units
        kind, recurrent_kind = self.kind, self.recurrent_kind
        original_recurrent = recurrent_kernel
        inputs = time_major(xp, x, self.go_backwards)
        gates = inputs.reshape(steps * batch, features) @ kernel
        if bias is not None:
            gates += bias
        gates = gates.reshape(steps, batch, 4 * units)
        # With the default activations every gate goes through one sigmoid
        # over the whole contiguous (batch, 4u) block, tanh(x) being
        # 2 * sigmoid(2x) - 1: about twice as fast as activating the four
        # strided column blocks one by one. The candidate's pre-activation
        # is doubled for it, in the projection and in the recurrent kernel.
        whole_block = self.whole_block and (kind, recurrent_kind) == ("tanh", "sigmoid")
        if whole_block:
            gates[:, :, u2:u3] *= 2.0
            recurrent_kernel = recurrent_kernel.copy()
            recurrent_kernel[:, u2:u3] *= 2.0
        hidden = xp.empty((steps + 1, batch, units), dtype=gates.dtype)
        cells = xp.empty((steps + 1, batch, units), dtype=gates.dtype)
        cell_out = xp.empty((steps, batch, units), dtype=gates.dtype)
        hidden[0] = 0 if h0 is None else h0
        cells[0] = 0 if c0 is None else c0
        product = xp.empty((batch, units), dtype=gates.dtype)
        for t in range(steps):
            z = gates[t]
            z += hidden[t] @ recurrent_kernel
            if whole_block:
                activate(xp, "sigmoid", z)
                candidate = z[:, u2:u3]
                candidate *= 2.0
                candidate -= 1.0
            else:
                activate(xp, recurrent_kind, z[:, :u2])
                activate(xp, kind, z[:, u2:u3])
                activate(xp, recurrent_kind, z[:, u3:])
            xp.multiply(z[:, u1:u2], cells[t], out=cells[t + 1])
            xp.multiply(z[:, :u1], z[:, u2:u3], out=product)
            cells[t + 1] += product
            activate(xp, kind, cells[t + 1], cell_out[t])
            xp.multiply(z[:, u3:], cell_out[t], out=hidden[t + 1])
        needs = self.needs_input_grad
        self.save_for_backward(inputs if needs[1] else None, kernel if needs[0] else None, original_recurrent,
                               gates, hidden, cells, cell_out)
        last = (hidden[steps].copy(), cells[steps].copy())
        if self.return_sequences:
            return (xp.ascontiguousarray(hidden[1:].transpose(1, 0, 2)),) + last
        return last

    def backward(self, *grads):
        xp = self.device.xp
        inputs, kernel, recurrent_kernel, gates, hidden, cells, cell_out = self.saved
        sequence_grad = grads[0].transpose(1, 0, 2) if self.return_sequences else None
        grad_h, grad_c = grads[-2:]
        steps, batch, width = gates.shape
        u1, u2, u3 = width // 4, width // 2, 3 * width // 4
        kind, recurrent_kind = self.kind, self.recurrent_kind
        grad_gates = xp.empty_like(gates)
        dh = xp.array(grad_h, dtype=gates.dtype)
        dc = xp.array(grad_c, dtype=gates.dtype)
        product = xp.empty_like(dc)
        recurrent_t = recurrent_kernel.T
        whole_block = self.whole_block and (kind, recurrent_kind) == ("tanh", "sigmoid")
        derivative = xp.empty((batch, width), dtype=gates.dtype) if whole_block else None
        for t in range(steps - 1, -1, -1):
            if sequence_grad is not None:
                dh += sequence_grad[t]
            z, g = gates[t], grad_gates[t]
            # d(loss)/d(activated gate) per block, then times the derivative.
            xp.multiply(dh, cell_out[t], out=g[:, u3:])
            xp.multiply(dh, z[:, u3:], out=product)
            times_derivative(xp, kind, product, cell_out[t])
            dc += product
            xp.multiply(dc, z[:, u2:u3], out=g[:, :u1])
            xp.multiply(dc, cells[t], out=g[:, u1:u2])
            xp.multiply(dc, z[:, :u1], out=g[:, u2:u3])
            if whole_block:
                # sigmoid' = s(1 - s) for the whole contiguous block, then
                # tanh' = 1 - g^2 for the candidate's columns.
                xp.subtract(1.0, z, out=derivative)
                derivative *= z
                candidate = z[:, u2:u3]
                xp.multiply(candidate, candidate, out=derivative[:, u2:u3])
                xp.subtract(1.0, derivative[:, u2:u3], out=derivative[:, u2:u3])
                g *= derivative
            else:
                times_derivative(xp, recurrent_kind, g[:, u3:], z[:, u3:])
                times_derivative(xp, recurrent_kind, g[:, :u1], z[:, :u1])
                times_derivative(xp, recurrent_kind, g[:, u1:u2], z[:, u1:u2])
                times_derivative(xp, kind, g[:, u2:u3], z[:, u2:u3])
            dc *= z[:, u1:u2]
            dh = g @ recurrent_t
        flat = grad_gates.reshape(steps * batch, width)
        needs = self.needs_input_grad
        grad_x, grad_kernel = input_gradients(xp, needs, flat, inputs, kernel, steps, batch, self.go_backwards)
        grad_recurrent = grad_bias = None
        if needs[2]:
            grad_recurrent = hidden[:steps].reshape(steps * batch, -1).T @ flat
        if needs[3]:
            grad_bias = flat.sum(axis=0)
        return (grad_x, grad_kernel, grad_recurrent, grad_bias, dh if needs[4] else None,
                dc if needs[5] else None)


def lstm_sequence(x, kernel, recurrent_kernel, bias, initial_h, initial_c, activation="tanh",
                  recurrent_activation="sigmoid", go_backwards=False, return_sequences=False):
    """Run an LSTM over ``x`` ``(batch, time, features)``.

    Args:
        x: a float Tensor ``(batch, time, features)``.
        kernel, recurrent_kernel, bias: Keras's weights ``(features, 4u)``,
            ``(u, 4u)``, ``(4u,)`` (bias may be None).
        initial_h, initial_c: the initial states ``(batch, u)`` (c may be
            None for zeros).
        activation, recurrent_activation: names of the fused activations.
        go_backwards, return_sequences: as the LSTM layer.

    Returns:
        ``(last h, last c)``, or ``(sequence, last h, last c)``.
    """
    go_backwards, return_sequences = check_settings(
        "lstm_sequence", {"activation": activation, "recurrent_activation": recurrent_activation},
        {"go_backwards": go_backwards, "return_sequences": return_sequences})
    function = LSTMSequence(activation, recurrent_activation, go_backwards, return_sequences)
    return in_float32(function, *operands("lstm_sequence", x, kernel, recurrent_kernel, bias, initial_h, initial_c))
