"""Depthwise 2-D convolution (Keras DepthwiseConv2D, and the first half of
SeparableConv2D), channels-last.

Each input channel c is convolved with its own ``depth_multiplier`` filters;
output channel ``c * depth_multiplier + m`` is filter m of channel c, as in
TensorFlow. There is no reduction over channels, so no GEMM: the op is
kh*kw vectorised multiply-adds over strided views of the padded input, one
per kernel offset.
"""

__all__ = ["depthwise_conv2d"]

from minikeras.autograd import Function
from minikeras.ops._checks import shape_of
from minikeras.ops.nn.conv_args import conv_geometry


class DepthwiseConv(Function):
    """Depthwise convolution over a WindowGeometry; the kernel is (kh, kw, C, multiplier)."""

    def __init__(self, geometry, multiplier):
        self.geometry = geometry
        self.multiplier = multiplier

    def forward(self, x, kernel):
        xp = self.device.xp
        geometry = self.geometry
        dtype = xp.result_type(x.dtype, kernel.dtype)
        padded = geometry.padded_block(x, 0, geometry.batch, geometry.pad_buffer(xp, geometry.batch, x.dtype))
        windows = geometry.windows(xp, padded)
        kh, kw = geometry.window
        out = xp.zeros((geometry.batch, geometry.out_h, geometry.out_w, geometry.channels, self.multiplier), dtype)
        term = xp.empty_like(out)
        for i in range(kh):
            for j in range(kw):
                xp.multiply(windows[:, :, :, i, j, :, None], kernel[i, j], out=term)
                out += term
        needs_x, needs_kernel = self.needs_input_grad
        self.save_for_backward(padded if needs_kernel else None, kernel if needs_x else None)
        return out.reshape(geometry.batch, geometry.out_h, geometry.out_w, -1)

    def backward(self, grad):
        xp = self.device.xp
        padded, kernel = self.saved
        geometry = self.geometry
        grad = grad.reshape(grad.shape[:3] + (geometry.channels, self.multiplier))
        grad_x = grad_kernel = None
        if padded is not None:
            windows = geometry.windows(xp, padded)
            kh, kw = geometry.window
            grad_kernel = xp.empty((kh, kw, geometry.channels, self.multiplier), grad.dtype)
            for i in range(kh):
                for j in range(kw):
                    grad_kernel[i, j] = (windows[:, :, :, i, j, :, None] * grad).sum(axis=(0, 1, 2))
        if kernel is not None:
            grad_x = xp.zeros((geometry.batch, geometry.height, geometry.width, geometry.channels), grad.dtype)
            for i, j, (out_rows, in_rows), (out_cols, in_cols) in geometry.offsets:
                part = grad[:, out_rows, out_cols]
                if self.multiplier == 1:
                    grad_x[:, in_rows, in_cols] += part[..., 0] * kernel[i, j, :, 0]
                else:
                    grad_x[:, in_rows, in_cols] += (part * kernel[i, j]).sum(axis=-1)
        return grad_x, grad_kernel


def depthwise_conv2d(x, kernel, strides=1, padding="valid", dilation_rate=1):
    """Depthwise 2-D convolution, channels-last.

    Args:
        x: (batch, height, width, channels).
        kernel: (kernel_h, kernel_w, channels, depth_multiplier).
        strides: int or pair.
        padding: "valid" or "same" (TensorFlow's).
        dilation_rate: int or pair.

    Returns:
        (batch, out_height, out_width, channels * depth_multiplier), output
        channel ``c * depth_multiplier + m`` being filter m of input channel c.

    Raises:
        ValueError: wrong ranks, channel mismatch, a kernel larger than the
            padded input, non-positive strides or dilation, unknown padding.
    """
    geometry = conv_geometry("depthwise_conv2d", x, kernel, 2, strides, padding, dilation_rate)
    return DepthwiseConv(geometry, shape_of(kernel)[3]).apply(x, kernel)
