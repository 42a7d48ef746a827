"""Transposed 2-D convolution (Keras Conv2DTranspose), channels-last.

It is the gradient of conv2d with respect to conv2d's input: the input
times the transposed kernel matrix, scattered back (col2im) into the larger
output. Its own backward is therefore a conv2d forward (for the input) and
a patch-matrix product (for the kernel), sharing one im2col pass.
"""

__all__ = ["conv2d_transpose"]

from minikeras.autograd import Function
from minikeras.ops._checks import shape_of
from minikeras.ops.nn.sliding_window import (
    WindowGeometry,
    as_pair,
    check_padding,
    col2im_product,
    im2col_products,
    is_int,
)
from minikeras._support.argument_validation import validate_tensor_input


class ConvTranspose(Function):
    """Transposed convolution; ``geometry`` describes the conv2d whose input is our output."""

    def __init__(self, geometry, output_shape):
        self.geometry = geometry
        self.output_shape = output_shape

    def forward(self, x, kernel):
        xp = self.device.xp
        self.input_shape, self.kernel_shape = x.shape, kernel.shape
        inputs = x.reshape(-1, x.shape[-1])
        matrix = kernel.reshape(self.geometry.patch_size, x.shape[-1])
        dtype = xp.result_type(x.dtype, kernel.dtype)
        out = col2im_product(self.device, inputs, xp.ascontiguousarray(matrix.T), self.geometry, dtype)
        needs_x, needs_kernel = self.needs_input_grad
        self.save_for_backward(inputs if needs_kernel else None, matrix if needs_x else None)
        return out

    def backward(self, grad):
        xp = self.device.xp
        inputs, matrix = self.saved
        grad_x, grad_kernel, _ = im2col_products(self.device, grad, self.geometry, right=matrix, left=inputs)
        return (
            None if grad_x is None else grad_x.reshape(self.input_shape),
            None if grad_kernel is None else grad_kernel.reshape(self.kernel_shape),
        )


def conv2d_transpose(x, kernel, strides=1, padding="valid", output_padding=None, dilation_rate=1):
    """Transposed 2-D convolution (the gradient of conv2d w.r.t. its input), channels-last.

    The output size per axis is Keras's: without ``output_padding``,
    ``size * stride + max(k - stride, 0)`` for "valid" and ``size * stride``
    for "same"; with it, ``(size - 1) * stride + k - 2 * pad + output_padding``
    where pad is 0 ("valid") or k // 2 ("same"), k being the dilated kernel size.

    Args:
        x: (batch, height, width, in_channels).
        kernel: (kernel_h, kernel_w, out_channels, in_channels), Keras
            Conv2DTranspose's layout.
        strides: int or pair.
        padding: "valid" or "same".
        output_padding: None, an int or a pair, each smaller than the stride.
        dilation_rate: int or pair.

    Returns:
        (batch, out_height, out_width, out_channels).

    Raises:
        ValueError: wrong ranks, channel mismatch, bad strides, dilation,
            padding or output_padding.
    """
    op_name = "conv2d_transpose"
    validate_tensor_input("conv2d_transpose", x, allow_bool=False, allow_complex=False)
    validate_tensor_input("conv2d_transpose", kernel, allow_bool=False, allow_complex=False)
    x_shape, kernel_shape = shape_of(x), shape_of(kernel)
    if len(x_shape) != 4:
        raise ValueError(f"{op_name} expects a 4-D input (batch, height, width, channels), received shape {x_shape}.")
    if len(kernel_shape) != 4:
        raise ValueError(
            f"{op_name} expects a 4-D kernel (kh, kw, out_channels, in_channels), received kernel shape "
            f"{kernel_shape} for input shape {x_shape}."
        )
    if x_shape[3] != kernel_shape[3] or min(kernel_shape) < 1:
        raise ValueError(
            f"{op_name}: the input has {x_shape[3]} channels (shape {x_shape}) but the kernel (shape {kernel_shape}, "
            f"layout (kh, kw, out_channels, in_channels)) expects {kernel_shape[3]}."
        )
    strides = as_pair(op_name, "strides", strides)
    dilation = as_pair(op_name, "dilation_rate", dilation_rate)
    padding = check_padding(op_name, padding)
    extra = (None, None)
    if output_padding is not None:
        extra = _output_padding(op_name, output_padding, strides)
    out_hw = tuple(
        _output_length(size, k, s, d, padding, e)
        for size, k, s, d, e in zip(x_shape[1:3], kernel_shape[:2], strides, dilation, extra)
    )
    out_shape = (x_shape[0], out_hw[0], out_hw[1], kernel_shape[2])
    note = f"output shape {out_shape} (input shape {x_shape}, kernel shape {kernel_shape})"
    geometry = WindowGeometry(op_name, out_shape, tuple(kernel_shape[:2]), strides, dilation, padding, note)
    if (geometry.out_h, geometry.out_w) != tuple(x_shape[1:3]):
        raise ValueError(
            f"{op_name}: output_padding {output_padding!r} gives an output of shape {out_shape} whose "
            f"convolution would have size {(geometry.out_h, geometry.out_w)}, not the input's {tuple(x_shape[1:3])}."
        )
    return ConvTranspose(geometry, out_shape).apply(x, kernel)


def _output_padding(op_name, output_padding, strides):
    values = (output_padding, output_padding) if is_int(output_padding) else output_padding
    valid = isinstance(values, (tuple, list)) and len(values) == 2 and all(is_int(v) and v >= 0 for v in values)
    if not valid or any(v >= s for v, s in zip(values, strides)):
        raise ValueError(
            f"{op_name}: output_padding must be non-negative ints smaller than the strides {strides}, "
            f"received {output_padding!r}."
        )
    return tuple(int(v) for v in values)


def _output_length(size, kernel, stride, dilation, padding, output_padding):
    """Keras's deconv_output_length."""
    effective = (kernel - 1) * dilation + 1
    if output_padding is None:
        if padding == "valid":
            return size * stride + max(effective - stride, 0)
        return size * stride
    pad = effective // 2 if padding == "same" else 0
    return (size - 1) * stride + effective - 2 * pad + output_padding
