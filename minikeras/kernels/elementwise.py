"""Elementwise fused kernels: bias + ReLU forward and the ReLU mask backward.

(Optimizer updates are elementwise too; they have their own module,
``optimizer_updates.py``, because their launch glue packs many variables
into one launch.)

Every kernel here is a grid-stride loop over C-contiguous arrays, one
thread per element; the references are the CPU's NumPy code.
"""
import numpy

from minikeras.kernels.kernel import Kernel, blocks_for, register

# ----------------------------------------------------------------- bias_relu
BIAS_RELU_SOURCE = r"""
extern "C" __global__ void bias_relu(scalar_t* out, const scalar_t* bias, long long rows, long long columns,
                                     int has_bias, int relu) {
    const long long count = rows * columns;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < count;
         i += (long long)blockDim.x * gridDim.x) {
        scalar_t value = out[i];
        if (has_bias) value += bias[i % columns];
        if (relu && value < 0) value = 0;  /* NaN stays NaN, as numpy.maximum(value, 0) */
        out[i] = value;
    }
}
"""


def bias_relu_reference(device, out, bias, relu):
    """``out += bias`` (on the last axis), then ReLU, in place on a 2-D ``out``."""
    if bias is not None:
        out += bias
    if relu:
        device.xp.maximum(out, 0, out=out)
    return out


def _bias_relu_launch(launcher, device, out, bias, relu):
    if bias is not None and bias.dtype != out.dtype:
        bias = bias.astype(out.dtype)  # the kernel reads both as scalar_t (the reference casts as it adds)
    rows, columns = out.shape
    grid, block = blocks_for(out.size)
    launcher.run(out.dtype, grid, block, (out, out if bias is None else bias, numpy.int64(rows),
                                          numpy.int64(columns), numpy.int32(bias is not None), numpy.int32(relu)))
    return out


register(Kernel("bias_relu", bias_relu_reference, BIAS_RELU_SOURCE, _bias_relu_launch))

# --------------------------------------------------------------- relu_backward
RELU_BACKWARD_SOURCE = r"""
extern "C" __global__ void relu_backward(const scalar_t* grad, const scalar_t* out, scalar_t* target,
                                         long long count) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < count;
         i += (long long)blockDim.x * gridDim.x) {
        target[i] = grad[i] * (scalar_t)(out[i] > 0);
    }
}
"""


def relu_backward_reference(device, grad, out, target):
    """``target = grad * (out > 0)``: the gradient through ReLU, whose
    output ``out`` is its own mask."""
    device.xp.multiply(grad, out > 0, out=target)
    return target


def _relu_backward_launch(launcher, device, grad, out, target):
    launcher.check(out.dtype, target.dtype)
    if grad.dtype != target.dtype:
        grad = grad.astype(target.dtype)
    grad = device.xp.ascontiguousarray(grad)
    grid, block = blocks_for(grad.size)
    launcher.run(grad.dtype, grid, block, (grad, out, target, numpy.int64(grad.size)))
    return target


register(Kernel("relu_backward", relu_backward_reference, RELU_BACKWARD_SOURCE, _relu_backward_launch))
