"""Dense's core: ``relu?(x @ kernel + bias)`` on the last axis of ``x``.

One fused node of the graph (matmul, bias add and, for relu, the
activation, written in place into the matmul's output), which saves two
temporaries the size of the output and two graph nodes per layer against
composing matmul, add and relu.
"""
from minikeras import kernels
from minikeras.kernels import matmul_epilogue
from minikeras.autograd import Function
from minikeras._support.argument_validation import as_tensor, validate_flag
from minikeras.ops.nn import bias_relu
from minikeras.ops.nn._blocks import matmul_pair

__all__ = ["dense"]


class DenseFunction(Function):
    """``relu?(x @ kernel + bias)`` on the last axis of ``x``, as one node.

    Keeps ``x`` only when the kernel needs a gradient, the kernel only when
    ``x`` does, and for relu the output itself (its sign is the mask).
    """

    def __init__(self, relu):
        self.relu = relu

    def forward(self, x, kernel, bias=None):
        self.input_shape = x.shape
        x2 = x if x.ndim == 2 else x.reshape(-1, x.shape[-1])
        if (bias is not None or self.relu) and matmul_epilogue.fits(x2.shape[0], x2.shape[1], kernel.shape[1]):
            out = kernels.get("matmul_bias_relu", self.device)(x2, kernel, bias, self.relu)  # one kernel on a GPU
        else:
            out = self.device.matmul(x2, kernel)
            if bias is not None or self.relu:
                kernels.get("bias_relu", self.device)(out, bias, self.relu)  # one fused kernel on a GPU
        needs = self.needs_input_grad
        self.has_bias = bias is not None
        self.save_for_backward(x2 if needs[1] else None, kernel if needs[0] else None, out if self.relu else None)
        if x.ndim != 2:
            return out.reshape(x.shape[:-1] + (kernel.shape[1],))
        return out

    def backward(self, grad):
        x2, kernel, out = self.saved
        needs = self.needs_input_grad
        grad2 = grad if grad.ndim == 2 else grad.reshape(-1, grad.shape[-1])
        wants_bias = self.has_bias and needs[2]
        grad_bias = None
        if out is not None or wants_bias:  # the ReLU mask and the bias gradient: one kernel on a GPU
            grad2, grad_bias = bias_relu.mask_and_sum(self.device, grad2, out, out is not None, wants_bias,
                                                      None if out is None else self.device.xp.empty_like(out))
        grad_x = grad_kernel = None
        if needs[0] and needs[1]:
            grad_x, grad_kernel = matmul_pair(self.device, (grad2, kernel.T), (x2.T, grad2))
        elif needs[0]:
            grad_x = self.device.matmul(grad2, kernel.T)
        elif needs[1]:
            grad_kernel = self.device.matmul(x2.T, grad2)
        if grad_x is not None and len(self.input_shape) != 2:
            grad_x = grad_x.reshape(self.input_shape)
        if self.has_bias:
            return grad_x, grad_kernel, grad_bias
        return grad_x, grad_kernel



def dense(x, kernel, bias=None, relu=False):
    """``x @ kernel + bias`` on the last axis of ``x``, then relu when asked.

    Args:
        x: a float Tensor ``(..., features)`` of rank >= 1.
        kernel: a Tensor ``(features, units)``.
        bias: an optional Tensor ``(units,)``.
        relu: apply relu in place (the output's sign is the backward mask).

    Returns:
        A Tensor ``(..., units)``.

    Raises:
        ValueError: the shapes do not chain.
    """
    x = as_tensor("dense", x, allow_bool=False, allow_complex=False)
    kernel = as_tensor("dense", kernel, allow_bool=False, allow_complex=False)
    x_shape, kernel_shape = x.data.shape, kernel.data.shape  # read once: every Dense call checks them
    if len(kernel_shape) != 2 or not x_shape or x_shape[-1] != kernel_shape[0]:
        raise ValueError(f"dense: expected x (..., features) and kernel (features, units), received x "
                         f"{tuple(x_shape)} and kernel {tuple(kernel_shape)}.")
    function = DenseFunction(validate_flag("dense", "relu", relu))
    if bias is None:
        return function.apply(x, kernel)
    bias = as_tensor("dense", bias, allow_bool=False, allow_complex=False)
    if tuple(bias.data.shape) != (kernel_shape[1],):
        raise ValueError(f"dense: bias must have shape ({kernel_shape[1]},), received {tuple(bias.shape)}.")
    return function.apply(x, kernel, bias)
