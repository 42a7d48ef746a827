"""Convolutions, channels-last like TensorFlow/Keras: conv1d, conv2d, and (from
sibling modules, re-exported here) conv2d_transpose and depthwise_conv2d.

A convolution is one im2col patch matrix times the kernel matrix:
``(N*Ho*Wo, kh*kw*Cin) @ (kh*kw*Cin, Cout)``. On the CPU the patch matrix is
built and multiplied a few samples at a time so that it stays in cache (see
``sliding_window``); 1x1 stride-1 convolutions skip it and are a plain matmul.

What backward keeps: the input (a reference, no copy) when the kernel needs
a gradient, and the kernel matrix when the input does. The patch matrix is
rebuilt in backward block by block rather than saved: measured on the target
machine, saving it costs kh*kw times the input's memory (132 MB for one
128x32x32x32 layer) and made that layer's forward 1.8x and its kernel
gradient 1.25x slower, because the saved matrix goes to main memory and back
while a rebuilt block is produced in cache. The exception is an input with
few channels (a first layer): its patch matrix is small and slow to build,
so it is kept (``sliding_window.keeps_patch_matrix``).

On the CPU, 3x3 stride-1 convolutions may run Winograd F(2x2, 3x3)
(``winograd.py``) instead, chosen per layer and separately for the forward
pass, the input's gradient and the kernel's gradient
(``conv_algorithm.choose``): e.g. im2col forward and Winograd backward.
Backward then keeps the kernel (and Winograd's transform of it when
forward made one) and the input, whichever algorithm each gradient uses.

With ``MINIKERAS_CUDNN=1`` on a GPU with cuDNN 9, float32 convolutions
whose padding cuDNN can express take cuDNN's forward pass and input
gradient instead (its backend API, a plan per shape), on the channels-last
tensors, with the bias and ReLU in one kernel after the forward pass; the
kernel's gradient is cuDNN's only while op determinism is off and cuDNN's
engine for it is an atomic one, else im2col + cuBLAS. It is opt-in until a
card has measured it (``device/cudnn.py``; the simulated GPU has its own
implementation).
"""

__all__ = ["conv1d", "conv2d", "conv2d_transpose", "depthwise_conv2d"]

import numpy

from minikeras.autograd import Function
from minikeras.device import cudnn
from minikeras.ops._checks import shape_of
from minikeras.ops.nn import bias_relu, conv_algorithm, winograd
from minikeras.ops.nn.sliding_window import col2im_product, im2col_products, keeps_patch_matrix, transposed_product
from minikeras.ops.nn.conv_algorithm import IM2COL, WINOGRAD
from minikeras.ops.nn.conv_args import conv_geometry
from minikeras.autograd.function import in_float32


class Conv(Function):
    """Convolution of an NHWC input (or NWC, seen as height 1) with a kernel,
    optionally followed by a bias add and ReLU (what Conv1D/Conv2D layers use).

    The bias and ReLU are applied to each block of the product while it is
    in cache, and in backward the ReLU mask and the bias sum are taken on
    each block of the gradient just before its kernel-gradient product: no
    separate passes over the output (see ``bias_relu``).

    Args:
        geometry: the WindowGeometry of the 4-D view of the input.
        output_shape: the shape to return (3-D for conv1d).
        relu: apply ReLU to the result.
    """

    def __init__(self, geometry, output_shape, relu=False):
        self.geometry = geometry
        self.output_shape = output_shape
        self.relu = relu
        self.pointwise = geometry.window == (1, 1) and geometry.strides == (1, 1) and not geometry.has_padding

    def forward(self, x, kernel, bias=None):
        geometry = self.geometry
        self.input_shape, self.kernel_shape = x.shape, kernel.shape
        self.has_bias = bias is not None
        images = x.reshape(geometry.batch, geometry.height, geometry.width, geometry.channels)
        self.library, self.spec = self._cudnn(x, kernel, bias)
        if self.spec is not None:
            return self._forward_cudnn(images, kernel, bias)
        needs_x, needs_kernel = self.needs_input_grad[:2]
        self.algorithms = conv_algorithm.ALL_IM2COL if self.pointwise else conv_algorithm.choose(
            self.device, geometry, kernel.shape[-1], x.dtype, any(self.needs_input_grad), needs_x)
        self.tiling = None
        if WINOGRAD in self.algorithms:
            self.tiling = winograd.Tiling(geometry)
            self.samples_per_block = conv_algorithm.winograd_samples_per_block(geometry, kernel.shape[-1])
        transformed = None
        if self.algorithms.forward == WINOGRAD:
            out, transformed = winograd.forward(self.device, images, kernel, bias, self.relu, self.tiling,
                                                self.samples_per_block)
            source = images if needs_kernel else None
        else:
            out, source = self._forward_im2col(images, kernel, bias, needs_kernel)
        if self.algorithms.input_gradient != WINOGRAD:
            transformed = None
        # Backward keeps: for the kernel's gradient the input (a reference) or
        # the patch matrix kept from forward; for the input's, the kernel (and
        # Winograd's transform of it when forward made one); the output itself
        # (this op's, not a copy) as the ReLU mask.
        self.save_for_backward(source, kernel if needs_x else None, out if self.relu else None,
                               transformed if needs_x else None)
        return out.reshape(self.output_shape)

    def _forward_im2col(self, images, kernel, bias, needs_kernel):
        """``(out, the input or patch matrix for the kernel's gradient or None)``."""
        geometry = self.geometry
        matrix = kernel.reshape(geometry.patch_size, -1)
        if self.pointwise:
            # The input itself is the patch matrix.
            patches = images.reshape(-1, geometry.channels)
            out = bias_relu.apply(self.device, self.device.gemm(patches, matrix), bias, self.relu)
        else:
            keep = (needs_kernel and self.algorithms.kernel_gradient == IM2COL
                    and keeps_patch_matrix(self.device, geometry))
            finish = bias_relu.epilogue(self.device, bias, self.relu)
            out, _, patches = im2col_products(self.device, images, geometry, right=matrix, keep=keep, epilogue=finish)
        return out, ((images if patches is None else patches) if needs_kernel else None)

    def _winograd_gradients(self, grad, images, kernel, transformed, out, relu, wants):
        """winograd.backward's ``(grad_images, grad_kernel, grad_bias)`` for the
        output's gradient ``grad`` (any shape with the output's elements)."""
        geometry = self.geometry
        if wants[0] and transformed is None:  # forward ran im2col: transform the kernel here
            dtype = numpy.result_type(grad.dtype, kernel.dtype)
            transformed = winograd.kernel_transform(
                kernel.reshape(3, 3, geometry.channels, -1).astype(dtype, copy=False))
        grad = numpy.ascontiguousarray(grad).reshape(
            geometry.batch, geometry.out_h, geometry.out_w, self.kernel_shape[-1])
        mask = None if out is None or not relu else out.reshape(grad.shape)
        return winograd.backward(self.device, grad, images, transformed, mask, relu, wants, self.tiling,
                                 self.samples_per_block)

    def _cudnn(self, x, kernel, bias):
        """``(cuDNN's convolutions, the Spec)`` when cuDNN takes this
        convolution (device/cudnn.py: a GPU, float32, padding it can
        express, plans for its forward pass and input gradient), else ``(None, None)``. 1x1
        stride-1 convolutions stay one matrix product."""
        library = None if self.pointwise or not x.size or not kernel.size else self.device.convolutions()
        if library is None or x.dtype != "float32" or kernel.dtype != "float32" or \
                (bias is not None and bias.dtype != "float32"):
            return None, None
        spec = cudnn.spec_for(self.geometry, self.kernel_shape[-1])
        if spec is None or not library.usable(self.device.xp, spec):
            return None, None
        return library, spec

    def _forward_cudnn(self, images, kernel, bias):
        xp = self.device.xp
        spec = self.spec
        # Keras's (kh, kw, C, K) kernel in cuDNN's NHWC filter layout (K, kh, kw, C).
        filters = xp.ascontiguousarray(kernel.reshape(spec.window + kernel.shape[-2:]).transpose(3, 0, 1, 2))
        out = self.library.forward(xp, xp.ascontiguousarray(images), filters, spec)
        bias_relu.apply(self.device, out.reshape(-1, spec.filters), bias, self.relu)
        needs_x, needs_kernel = self.needs_input_grad[:2]
        self.save_for_backward(images if needs_kernel else None, filters if needs_x else None,
                               out if self.relu else None)
        return out.reshape(self.output_shape)

    def _backward_cudnn(self, grad):
        xp = self.device.xp
        spec = self.spec
        images, filters, out = self.saved
        grad = xp.ascontiguousarray(grad).reshape(-1, spec.filters)
        wants_bias = self.has_bias and self.needs_input_grad[2]
        grad_bias = grad_x = grad_kernel = None
        if self.relu or wants_bias:
            grad, grad_bias = bias_relu.gradient(self.device, grad, None if out is None else out.reshape(grad.shape),
                                                 self.relu, wants_bias)
        grad = grad.reshape(out.shape if out is not None else (spec.batch,) + spec.out + (spec.filters,))
        if images is not None and self.library.filter_gradient_usable(xp, spec):  # an atomic engine (cudnn.py)
            filters_grad = self.library.backward_filter(xp, xp.ascontiguousarray(images), xp.ascontiguousarray(grad),
                                                        spec)
            grad_kernel = filters_grad.transpose(1, 2, 3, 0).reshape(self.kernel_shape)  # (K, kh, kw, C) to Keras's
        elif images is not None:  # im2col + cuBLAS: cuDNN's deterministic filter gradients are slow (cudnn.py)
            _, grad_kernel, _ = im2col_products(self.device, images, self.geometry, left=grad.reshape(-1, spec.filters))
            grad_kernel = grad_kernel.reshape(self.kernel_shape)
        if filters is not None:
            grad_x = self.library.backward_data(xp, grad, filters, spec).reshape(self.input_shape)
        grads = (grad_x, grad_kernel)
        return grads + (grad_bias,) if self.has_bias else grads

    def backward(self, grad):
        if self.spec is not None:
            return self._backward_cudnn(grad)
        xp = self.device.xp
        source, kernel, out, transformed = self.saved
        geometry = self.geometry
        wants_bias = self.has_bias and self.needs_input_grad[2]
        kernel_algorithm = None if source is None else self.algorithms.kernel_gradient
        input_algorithm = None if kernel is None else self.algorithms.input_gradient
        if {kernel_algorithm, input_algorithm} - {None} == {WINOGRAD}:
            # Winograd masks, sums the bias and transforms the gradient once for both.
            grad_x, grad_kernel, grad_bias = self._winograd_gradients(
                grad, source, kernel, transformed, out, self.relu, (kernel is not None, source is not None, wants_bias))
            return self._gradients(grad_x, grad_kernel, grad_bias)
        grad = xp.ascontiguousarray(grad).reshape(-1, self.output_shape[-1])
        out = None if out is None else out.reshape(grad.shape)
        grad_x = grad_kernel = grad_bias = left_block = None
        # The ReLU mask and the bias sum are taken block by block inside the
        # im2col kernel-gradient loop when there is one, else in one pass.
        if kernel_algorithm == IM2COL and (self.relu or wants_bias):
            masked = xp.empty_like(grad) if self.relu else grad
            sums = {}

            def left_block(rows):
                block, sums[rows.start] = bias_relu.mask_and_sum(
                    self.device, grad[rows], None if out is None else out[rows], self.relu, wants_bias, masked[rows])
                return block
        elif self.relu or wants_bias:
            masked, grad_bias = bias_relu.gradient(self.device, grad, out, self.relu, wants_bias)
        else:
            masked = grad
        if kernel_algorithm == WINOGRAD:
            grad_kernel = self._winograd_gradients(masked, source, kernel, None, None, False, (False, True, False))[1]
        elif kernel_algorithm == IM2COL:
            if source.ndim == 2:  # the patch matrix kept from forward (or the input of a 1x1 convolution)
                grad_kernel = transposed_product(self.device, source, masked, left_block)
            else:
                _, grad_kernel, _ = im2col_products(self.device, source, geometry, left=masked, left_block=left_block)
        if left_block is not None and wants_bias:
            grad_bias = self.device.sum_in_order([sums[key] for key in sorted(sums)], grad.shape[-1], grad.dtype)
        if input_algorithm == WINOGRAD:
            grad_x = self._winograd_gradients(masked, None, kernel, transformed, None, False, (True, False, False))[0]
        elif input_algorithm == IM2COL:
            matrix = kernel.reshape(geometry.patch_size, -1)
            if self.pointwise:
                grad_x = self.device.gemm(masked, matrix.T)
            else:
                dtype = xp.result_type(grad.dtype, matrix.dtype)
                # matrix.T as a view: col2im copies it once, flipped, where it needs to.
                grad_x = col2im_product(self.device, masked, matrix.T, geometry, dtype)
        return self._gradients(grad_x, grad_kernel, grad_bias)

    def _gradients(self, grad_x, grad_kernel, grad_bias):
        """backward's result: the gradients in the inputs' shapes (and the bias's when there is one)."""
        grads = (
            None if grad_x is None else grad_x.reshape(self.input_shape),
            None if grad_kernel is None else grad_kernel.reshape(self.kernel_shape),
        )
        return grads + (grad_bias,) if self.has_bias else grads


def conv_bias_relu(x, kernel, bias=None, relu=False, rank=2, strides=1, padding="valid", dilation_rate=1):
    """``relu?(conv(x, kernel) + bias)`` as one op, for Conv1D/Conv2D layers.

    Same arguments and errors as conv1d (``rank`` 1) or conv2d (``rank`` 2);
    ``bias`` is None or has one value per output channel.
    """
    name = "conv2d" if rank == 2 else "conv1d"
    geometry = conv_geometry(name, x, kernel, rank, strides, padding, dilation_rate)
    filters = shape_of(kernel)[-1]
    if bias is not None and tuple(shape_of(bias)) != (filters,):
        raise ValueError(f"{name}: the bias must have shape ({filters},) (one value per output channel), "
                         f"received {tuple(shape_of(bias))}.")
    spatial = (geometry.out_h, geometry.out_w) if rank == 2 else (geometry.out_w,)
    function = Conv(geometry, (geometry.batch,) + spatial + (filters,), relu=relu)
    return in_float32(function, x, kernel) if bias is None else in_float32(function, x, kernel, bias)


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
    return in_float32(Conv(geometry, out_shape), x, kernel)


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
    return in_float32(Conv(geometry, out_shape), x, kernel)


from minikeras.ops.nn.conv_depthwise import depthwise_conv2d  # noqa: E402,F401  (re-exported)
from minikeras.ops.nn.conv_transpose import conv2d_transpose  # noqa: E402,F401  (re-exported)
