"""A whole GRU sequence as one graph node, with back-propagation through
time (Keras's formulation: gates z, r, h packed along the last axis).
"""
from minikeras.autograd import Function
from minikeras.autograd.function import in_float32
from minikeras.ops.nn.rnn_kernels import (activate, check_settings, input_gradients, operands, sequence_outputs,
                                          time_major, times_derivative)

__all__ = ["gru_sequence"]



class GRUSequence(Function):
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
        return sequence_outputs(xp, hidden, self.return_sequences)

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
        grad_x, grad_kernel = input_gradients(xp, needs, flat, inputs, kernel, steps, batch, self.go_backwards)
        grad_recurrent = grad_bias = None
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


def gru_sequence(x, kernel, recurrent_kernel, bias, initial_state, activation="tanh",
                 recurrent_activation="sigmoid", reset_after=True, go_backwards=False, return_sequences=False):
    """Run a GRU over ``x`` ``(batch, time, features)``.

    Args:
        x: a float Tensor ``(batch, time, features)``.
        kernel, recurrent_kernel: Keras's weights ``(features, 3u)``, ``(u, 3u)``.
        bias: ``(2, 3u)`` with reset_after, else ``(3u,)``; or None.
        initial_state: ``h0`` ``(batch, u)``.
        activation, recurrent_activation: names of the fused activations.
        reset_after, go_backwards, return_sequences: as the GRU layer.

    Returns:
        The last h, or ``(sequence, last h)``.
    """
    reset_after, go_backwards, return_sequences = check_settings(
        "gru_sequence", {"activation": activation, "recurrent_activation": recurrent_activation},
        {"reset_after": reset_after, "go_backwards": go_backwards, "return_sequences": return_sequences})
    tensors = operands("gru_sequence", x, kernel, recurrent_kernel, bias, initial_state)
    bias = tensors[3]
    if bias is not None and tensors[2] is not None:
        columns = tuple(tensors[2].shape)[-1]
        expected = (2, columns) if reset_after else (columns,)
        if tuple(bias.shape) != expected:
            raise ValueError(f"gru_sequence: bias must have shape {expected} with reset_after={reset_after}, "
                             f"received {tuple(bias.shape)}.")
    function = GRUSequence(activation, recurrent_activation, reset_after, go_backwards, return_sequences)
    return in_float32(function, *tensors)
