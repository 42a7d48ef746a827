"""Max and average pooling, channels-last like TensorFlow/Keras (2-D, and 1-D
through the 2-D code with a height of 1).

Each direction is one fused kernel (``minikeras/kernels/pooling.py``): on
the CPU one vectorised pass per window offset (pool_h * pool_w of them)
over strided views of the input, clipped at the border instead of padded,
so no im2col and no padded copy is made; on a GPU one CUDA kernel that
does whole windows per thread.

Max pooling keeps for backward only the index of the winning offset in each
window (uint8: a quarter of the output's bytes); on ties the first offset in
row-major window order wins and gets the whole gradient, as in TensorFlow
and PyTorch. SAME padding never wins (it counts as -inf). Average pooling
with SAME padding divides by the number of real (non-padded) elements in
each window, as TensorFlow does.
"""

__all__ = ["max_pool1d", "max_pool2d", "avg_pool1d", "avg_pool2d"]

import numpy

from minikeras import kernels
from minikeras.backend.dtypes import is_float_dtype
from minikeras.autograd import Function
from minikeras.ops._checks import shape_of
from minikeras.ops.nn.sliding_window import window_geometry, as_pair, as_single, check_padding
from minikeras._support.argument_validation import validate_tensor_input


class _Pool(Function):
    """Shared shape handling: the op works on the 4-D (N, H, W, C) view of its
    input; the math is one fused kernel per direction (``kernels/pooling.py``)."""

    def __init__(self, geometry, output_shape):
        self.geometry = geometry
        self.output_shape = output_shape

    def images(self, x):
        geometry = self.geometry
        return x.reshape(geometry.batch, geometry.height, geometry.width, geometry.channels)


class MaxPool(_Pool):
    """Max pooling; see the module docstring for ties and padding."""

    def forward(self, x):
        self.input_shape = x.shape
        out, index = kernels.get("max_pool", self.device)(self.images(x), self.geometry, self.needs_input_grad[0])
        self.save_for_backward(index)
        return out.reshape(self.output_shape)

    def backward(self, grad):
        (index,) = self.saved
        grad_x = kernels.get("max_pool_backward", self.device)(grad.reshape(index.shape), index, self.geometry)
        return grad_x.reshape(self.input_shape)


class AvgPool(_Pool):
    """Average pooling; with SAME padding each window's mean is over its real elements."""

    def forward(self, x):
        self.input_shape = x.shape
        return kernels.get("avg_pool", self.device)(self.images(x), self.geometry).reshape(self.output_shape)

    def backward(self, grad):
        grad_x = kernels.get("avg_pool_backward", self.device)(grad, self.geometry)
        return grad_x.reshape(self.input_shape)


def max_pool2d(x, pool_size, strides=None, padding="valid"):
    """2-D max pooling, channels-last (Keras MaxPooling2D's math).

    Args:
        x: (batch, height, width, channels).
        pool_size: int or pair.
        strides: int, pair, or None for pool_size.
        padding: "valid" or "same" (TensorFlow's; the padding never wins).

    Returns:
        (batch, out_height, out_width, channels).

    Raises:
        ValueError: wrong rank, a window larger than the padded input,
            non-positive sizes or strides, unknown padding.
    """
    return MaxPool(*_pool_geometry("max_pool2d", x, pool_size, strides, padding, 2)).apply(x)


def avg_pool2d(x, pool_size, strides=None, padding="valid"):
    """2-D average pooling, channels-last (Keras AveragePooling2D's math).

    With "same" padding each window is averaged over its real elements only,
    as TensorFlow does. Arguments, result and errors as max_pool2d.
    """
    return AvgPool(*_pool_geometry("avg_pool2d", x, pool_size, strides, padding, 2)).apply(x)


def max_pool1d(x, pool_size=2, strides=None, padding="valid"):
    """1-D max pooling of (batch, width, channels) (Keras MaxPooling1D's math).

    Args:
        x: (batch, width, channels).
        pool_size: int.
        strides: int, or None for pool_size.
        padding: "valid" or "same".

    Returns:
        (batch, out_width, channels).

    Raises:
        ValueError: as max_pool2d.
    """
    return MaxPool(*_pool_geometry("max_pool1d", x, pool_size, strides, padding, 1)).apply(x)


def avg_pool1d(x, pool_size=2, strides=None, padding="valid"):
    """1-D average pooling of (batch, width, channels); see avg_pool2d and max_pool1d."""
    return AvgPool(*_pool_geometry("avg_pool1d", x, pool_size, strides, padding, 1)).apply(x)


def _pool_geometry(op_name, x, pool_size, strides, padding, rank):
    validate_tensor_input(op_name, x, allow_bool=False, allow_complex=False)
    if op_name.startswith("avg") and getattr(x, "dtype", None) is not None and not is_float_dtype(x.dtype):
        raise TypeError(f"{op_name} expects floating-point inputs, received dtype {x.dtype}. Cast it first.")
    """Check a pooling op's arguments; return (WindowGeometry, output shape)."""
    x_shape = shape_of(x)
    if len(x_shape) != rank + 2:
        axes = "(batch, height, width, channels)" if rank == 2 else "(batch, width, channels)"
        raise ValueError(f"{op_name} expects a {rank + 2}-D input {axes}, received shape {x_shape}.")
    padding = check_padding(op_name, padding)
    if rank == 2:
        window = as_pair(op_name, "pool_size", pool_size)
        strides = window if strides is None else as_pair(op_name, "strides", strides)
        images_shape = x_shape
    else:
        window = (1, as_single(op_name, "pool_size", pool_size))
        strides = window if strides is None else (1, as_single(op_name, "strides", strides))
        images_shape = (x_shape[0], 1, x_shape[1], x_shape[2])
    geometry = window_geometry(op_name, images_shape, window, strides, (1, 1), padding, f"input shape {x_shape}")
    if rank == 2:
        out_shape = (x_shape[0], geometry.out_h, geometry.out_w, x_shape[3])
    else:
        out_shape = (x_shape[0], geometry.out_w, x_shape[2])
    return geometry, out_shape
