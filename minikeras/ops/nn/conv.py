"""Convolutions, channels-last like TensorFlow/Keras: conv1d, conv2d, and (from
sibling modules, re-exported here) conv2d_transpose and depthwise_conv2d.

A convolution is one im2col patch matrix times the kernel matrix:
``(N*Ho*Wo, kh*kw*Cin) @ (kh*kw*Cin, Cout)``. On the CPU the patch matrix is
built and multiplied a few samples at a time so that it stays in cache (see
``_im2col``); 1x1 stride-1 convolutions skip it and are a plain matmul.

What backward keeps: the input (a reference, no copy) when the kernel needs
a gradient, and the kernel matrix when the input does. The patch matrix is
rebuilt in backward block by block rather than saved: measured on the target
machine, saving it costs kh*kw times the input's memory (132 MB for one
128x32x32x32 layer) and made that layer's forward 1.8x and its kernel
gradient 1.25x slower, because the saved matrix goes to main memory and back
while a rebuilt block is produced in cache. The exception is an input with
few channels (a first layer): its patch matrix is small and slow to build,
so it is kept (``_im2col.keeps_patch_matrix``).
"""

__all__ = ["conv1d", "conv2d", "conv2d_transpose", "depthwise_conv2d"]

from minikeras.autograd import Function
from minikeras.ops._checks import shape_of
from minikeras.ops.nn._im2col import col2im_product, im2col_products, keeps_patch_matrix
from minikeras.ops.nn.conv_args import conv_geometry


class Conv(Function):
    """Convolution of an NHWC input (or NWC, seen as height 1) with a kernel.

    Args:
        geometry: the WindowGeometry of the 4-D view of the input.
        output_shape: the shape to return (3-D for conv1d).
    """

    def __init__(self, geometry, output_shape):
        self.geometry = geometry
        self.output_shape = output_shape
        self.pointwise = geometry.window == (1, 1) and geometry.strides == (1, 1) and not geometry.has_padding

    def forward(self, x, kernel):
        xp = self.device.xp
        geometry = self.geometry
        self.input_shape, self.kernel_shape = x.shape, kernel.shape
        images = x.reshape(geometry.batch, geometry.height, geometry.width, geometry.channels)
        matrix = kernel.reshape(geometry.patch_size, -1)
        needs_x, needs_kernel = self.needs_input_grad
        if self.pointwise:
            # The input itself is the patch matrix.
            patches = images.reshape(-1, geometry.channels)
            out = patches @ matrix
        else:
            keep = needs_kernel and keeps_patch_matrix(xp, geometry)
            out, _, patches = im2col_products(xp, images, geometry, right=matrix, keep=keep)
        # For the kernel gradient keep the patch matrix when it exists, else the
        # input (a reference, no copy) to rebuild it block by block.
        source = (images if patches is None else patches) if needs_kernel else None
        self.save_for_backward(source, matrix if needs_x else None)
        return out.reshape(self.output_shape)

    def backward(self, grad):
        xp = self.device.xp
        source, matrix = self.saved
        geometry = self.geometry
        grad = xp.ascontiguousarray(grad).reshape(-1, self.output_shape[-1])
        grad_x = grad_kernel = None
        if source is not None:
            if source.ndim == 2:
                grad_kernel = source.T @ grad
            else:
                _, grad_kernel, _ = im2col_products(xp, source, geometry, left=grad)
        if matrix is not None:
            if self.pointwise:
                grad_x = grad @ matrix.T
            else:
                dtype = xp.result_type(grad.dtype, matrix.dtype)
                grad_x = col2im_product(xp, grad, xp.ascontiguousarray(matrix.T), geometry, dtype)
        return (
            None if grad_x is None else grad_x.reshape(self.input_shape),
            None if grad_kernel is None else grad_kernel.reshape(self.kernel_shape),
        )


def conv2d(x, kernel, strides=1, padding="valid", dilation_rate=1):
    """2-D convolution (cross-correlation, as in every DL library), channels-last.

    Args:
        x: input of shape (batch, height, width, in_channels).
        kernel: (kernel_h, kernel_w, in_channels, out_channels), Keras Conv2D's layout.
        strides: int or pair.
        padding: "valid" (none) or "same" (TensorFlow's: output size
            ceil(size / stride), the odd padding element at the bottom/right).
        dilation_rate: int or pair.

    Returns:
        (batch, out_height, out_width, out_channels). No bias: layers add it.

    Raises:
        ValueError: wrong ranks, channel mismatch, a kernel larger than the
            padded input, non-positive strides or dilation, unknown padding.

    Example:
        >>> y = conv2d(x, kernel, strides=2, padding="same")  # x (8, 32, 32, 3), kernel (3, 3, 3, 16)
        >>> y.shape
        (8, 16, 16, 16)
    """
    geometry = conv_geometry("conv2d", x, kernel, 2, strides, padding, dilation_rate)
    out_shape = (geometry.batch, geometry.out_h, geometry.out_w, shape_of(kernel)[3])
    return Conv(geometry, out_shape).apply(x, kernel)


def conv1d(x, kernel, strides=1, padding="valid", dilation_rate=1):
    """1-D convolution, channels-last (Keras Conv1D's math).

    Args:
        x: input of shape (batch, width, in_channels).
        kernel: (kernel_w, in_channels, out_channels).
        strides: int.
        padding: "valid", "same" (TensorFlow's) or "causal" (left padding of
            (kernel_w - 1) * dilation_rate, so output t sees inputs <= t).
        dilation_rate: int.

    Returns:
        (batch, out_width, out_channels).

    Raises:
        ValueError: as conv2d.
    """
    geometry = conv_geometry("conv1d", x, kernel, 1, strides, padding, dilation_rate)
    out_shape = (geometry.batch, geometry.out_w, shape_of(kernel)[2])
    return Conv(geometry, out_shape).apply(x, kernel)


from minikeras.ops.nn.conv_depthwise import depthwise_conv2d  # noqa: E402,F401  (re-exported)
from minikeras.ops.nn.conv_transpose import conv2d_transpose  # noqa: E402,F401  (re-exported)
