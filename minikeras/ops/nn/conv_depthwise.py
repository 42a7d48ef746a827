"""Depthwise 2-D convolution (Keras DepthwiseConv2D, and the first half of
SeparableConv2D), channels-last.

Each input channel c is convolved with its own ``depth_multiplier`` filters;
output channel ``c * depth_multiplier + m`` is filter m of channel c, as in
TensorFlow. That equals a multiplier-1 depthwise convolution of the input
with each channel repeated ``depth_multiplier`` times, which is how it is
computed.

There is no reduction over channels, so no GEMM: the op is kh*kw multiply-adds
over strided views of the padded input, one per kernel offset, a few samples
at a time so the views stay in cache. The kernel row is pre-tiled to the
output width so that, at stride 1, every pass runs over whole output rows
(``Wo*C`` contiguous floats) rather than ``C``-long pieces.
"""

__all__ = ["depthwise_conv2d"]

from minikeras.autograd import Function
from minikeras.ops._checks import shape_of
from minikeras.ops.nn._im2col import WindowGeometry
from minikeras.ops.nn.conv_args import conv_geometry


class DepthwiseConv(Function):
    """Depthwise convolution over a WindowGeometry; the kernel is (kh, kw, C, multiplier)."""

    def __init__(self, geometry, multiplier):
        self.geometry = geometry
        self.multiplier = multiplier
        if multiplier > 1:
            # The geometry of the input with each channel repeated `multiplier` times.
            shape = (geometry.batch, geometry.height, geometry.width, geometry.channels * multiplier)
            geometry = WindowGeometry(
                "depthwise_conv2d", shape, geometry.window, geometry.strides, geometry.dilation, geometry.pads
            )
        self.repeated = geometry

    def forward(self, x, kernel):
        xp = self.device.xp
        self.kernel_shape = kernel.shape
        images = self.repeat(xp, x)
        flat_kernel = kernel.reshape(kernel.shape[0], kernel.shape[1], -1)
        out = _depthwise_correlation(self.device, images, flat_kernel, self.repeated)
        needs_x, needs_kernel = self.needs_input_grad
        self.save_for_backward(x if needs_kernel else None, flat_kernel if needs_x else None)
        return out

    def repeat(self, xp, x):
        return x if self.multiplier == 1 else xp.repeat(x, self.multiplier, axis=3)

    def backward(self, grad):
        xp = self.device.xp
        x, flat_kernel = self.saved
        geometry = self.repeated
        grad_x = grad_kernel = None
        if x is not None:
            grad_kernel = _depthwise_kernel_grad(self.device, self.repeat(xp, x), grad, geometry).reshape(self.kernel_shape)
        if flat_kernel is not None:
            grad_x = _depthwise_input_grad(self.device, grad, flat_kernel, geometry)
            if self.multiplier > 1:
                # Sum the repeated copies back; adding strided views is ~40x faster
                # than a reduction over a short last axis.
                total = grad_x[..., 0 :: self.multiplier].copy()
                for m in range(1, self.multiplier):
                    total += grad_x[..., m :: self.multiplier]
                grad_x = total
        return grad_x, grad_kernel


def _depthwise_correlation(device, x, kernel, geometry):
    """out[n, o, p, c] = sum_ij window_ij(x)[n, o, p, c] * kernel[i, j, c], block by block."""
    xp = device.xp
    batch, out_h, out_w, channels = geometry.batch, geometry.out_h, geometry.out_w, geometry.channels
    kh, kw = geometry.window
    dtype = xp.result_type(x.dtype, kernel.dtype)
    out = xp.empty((batch, out_h, out_w, channels), dtype)
    # (kh, kw, Wo, C): each kernel row repeated along the output width (see the module docstring).
    tiled = xp.ascontiguousarray(xp.broadcast_to(kernel[:, :, None, :], (kh, kw, out_w, channels)))
    bytes_per_sample = (geometry.padded[0] * geometry.padded[1] + 2 * out_h * out_w) * channels * x.itemsize
    per = geometry.samples_per_chunk(device, bytes_per_sample)
    padding = geometry.pad_buffer(xp, per, x.dtype)
    term = xp.empty((per, out_h, out_w, channels), dtype)
    for start in range(0, batch, per):
        stop = min(batch, start + per)
        windows = geometry.windows(xp, geometry.padded_block(x, start, stop, padding))
        target = out[start:stop]
        xp.multiply(windows[:, :, :, 0, 0], tiled[0, 0], out=target)
        for i in range(kh):
            for j in range(kw):
                if i or j:
                    xp.multiply(windows[:, :, :, i, j], tiled[i, j], out=term[: stop - start])
                    target += term[: stop - start]
    return out


def _depthwise_kernel_grad(device, x, grad, geometry):
    """grad_kernel[i, j, c] = sum over samples and positions of window_ij(x) * grad."""
    xp = device.xp
    batch, out_h, out_w, channels = geometry.batch, geometry.out_h, geometry.out_w, geometry.channels
    kh, kw = geometry.window
    result = xp.zeros((kh, kw, channels), grad.dtype)
    bytes_per_sample = (geometry.padded[0] * geometry.padded[1] + 2 * out_h * out_w) * channels * x.itemsize
    per = geometry.samples_per_chunk(device, bytes_per_sample)
    padding = geometry.pad_buffer(xp, per, x.dtype)
    term = xp.empty((per, out_h, out_w, channels), grad.dtype)
    # Summing over positions as a matrix-vector product is 2-4x faster than sum().
    ones = xp.ones(per * out_h * out_w, grad.dtype)
    for start in range(0, batch, per):
        stop = min(batch, start + per)
        windows = geometry.windows(xp, geometry.padded_block(x, start, stop, padding))
        block = term[: stop - start]
        rows = (stop - start) * out_h * out_w
        for i in range(kh):
            for j in range(kw):
                xp.multiply(windows[:, :, :, i, j], grad[start:stop], out=block)
                result[i, j] += ones[:rows] @ block.reshape(rows, channels)
    return result


def _depthwise_input_grad(device, grad, kernel, geometry):
    """The input gradient: a stride-1 "full" correlation with the flipped kernel, else scatter-adds."""
    xp = device.xp
    (kh, kw), (dh, dw) = geometry.window, geometry.dilation
    (top, bottom), (left, right) = geometry.pads
    pads = (((kh - 1) * dh - top, (kh - 1) * dh - bottom), ((kw - 1) * dw - left, (kw - 1) * dw - right))
    if geometry.strides == (1, 1) and min(min(pair) for pair in pads) >= 0:
        full = WindowGeometry("depthwise_conv2d", grad.shape, geometry.window, (1, 1), geometry.dilation, pads)
        return _depthwise_correlation(device, grad, kernel[::-1, ::-1], full)
    grad_x = xp.zeros((geometry.batch, geometry.height, geometry.width, geometry.channels), grad.dtype)
    for i, j, (out_rows, in_rows), (out_cols, in_cols) in geometry.offsets:
        grad_x[:, in_rows, in_cols] += grad[:, out_rows, out_cols] * kernel[i, j]
    return grad_x


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
