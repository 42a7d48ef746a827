"""``relu?(x + bias)`` written into ``x``, for the fresh output of a
convolution that nothing else reads: no temporary the size of the output,
one graph node for bias and relu."""
from minikeras.autograd import Function
from minikeras._support.argument_validation import as_tensor, validate_flag
from minikeras.ops.nn import bias_relu

__all__ = ["bias_activation"]


class BiasActivation(Function):
    """``relu?(x + bias)`` written into ``x``, the fresh output of a
    convolution that nothing else reads .

    Keeps the output only for relu (its sign is the mask).
    """

    def __init__(self, relu):
        self.relu = relu

    def forward(self, x, bias=None):
        x = self.device.xp.ascontiguousarray(x)  # a no-op for a convolution's output
        out = x.reshape(-1, x.shape[-1]) if x.ndim else x.reshape(1, 1)
        bias_relu.apply(self.device, out, bias, self.relu)
        if self.relu:
            self.save_for_backward(out)
        return x

    def backward(self, grad):
        wants_bias = len(self.needs_input_grad) > 1 and self.needs_input_grad[1]
        if not self.relu and not wants_bias:
            return (grad,)
        xp = self.device.xp
        flat = xp.ascontiguousarray(grad).reshape(-1, grad.shape[-1] if grad.ndim else 1)
        masked, grad_bias = bias_relu.gradient(self.device, flat, self.saved[0] if self.relu else None, self.relu,
                                               wants_bias)
        return masked.reshape(grad.shape), grad_bias



def bias_activation(x, bias=None, relu=False):
    """``x + bias`` on the last axis, then relu when asked, computed in
    place on ``x``'s buffer: only for a fresh Tensor nothing else reads
    (a convolution's output).

    Args:
        x: a float Tensor ``(..., channels)``.
        bias: an optional Tensor ``(channels,)``.
        relu: apply relu.

    Raises:
        ValueError: the bias does not match the last axis.
    """
    x = as_tensor("bias_activation", x, allow_bool=False, allow_complex=False)
    if bias is None:
        return BiasActivation(validate_flag("bias_activation", "relu", relu)).apply(x)
    bias = as_tensor("bias_activation", bias, allow_bool=False, allow_complex=False)
    if x.ndim < 1 or bias.shape != (x.shape[-1],):
        raise ValueError(f"bias_activation: bias must have shape (channels,) matching the last axis of x "
                         f"{tuple(x.shape)}, received {tuple(bias.shape)}.")
    return BiasActivation(validate_flag("bias_activation", "relu", relu)).apply(x, bias)
