"""3-D convolution and pooling over ``(batch, depth, height, width,
channels)`` volumes.

Each is a sum (or max) over the kernel's offsets: for every offset the op
takes one strided slice of the (padded) input, shaped like the output, and
multiplies it by that offset's ``(in, out)`` kernel matrix. Backward adds
the transposed products back into the same slices. No patch matrix is
built, so memory stays at the size of the input and output; 3-D layers are
rare enough that this simple form beats a 3-D im2col in clarity.
Padding "same" is TensorFlow's (the odd pixel after); max pooling never
picks padding and average pooling does not count it.
"""
import itertools

import numpy

from minikeras.autograd import Function
from minikeras.ops.math.unary import _as_tensor
from minikeras.autograd.function import in_float32
from minikeras.ops.nn.sliding_window import check_padding, same_padding, standardize_tuple

__all__ = ["conv3d", "max_pool3d", "avg_pool3d"]


def _triple(op_name, name, value):
    return standardize_tuple(op_name, name, value, 3)


class _Geometry:
    """Padding, output size and per-offset slices of one 3-D window op."""

    def __init__(self, op_name, spatial, window, strides, dilation, padding):
        self.window, self.strides, self.dilation = window, strides, dilation
        effective = [(k - 1) * d + 1 for k, d in zip(window, dilation)]
        if padding == "same":
            self.pads = [same_padding(size, e, s) for size, e, s in zip(spatial, effective, strides)]
        else:
            self.pads = [(0, 0)] * 3
        padded = [size + before + after for size, (before, after) in zip(spatial, self.pads)]
        if any(p < e for p, e in zip(padded, effective)):
            raise ValueError(f"{op_name}: the window {tuple(window)} (dilation {tuple(dilation)}) is larger than "
                             f"the input's spatial shape {tuple(spatial)} with padding '{padding}'.")
        self.padded = tuple(padded)
        self.out = tuple((p - e) // s + 1 for p, e, s in zip(padded, effective, strides))

    def offsets(self):
        return itertools.product(*(range(k) for k in self.window))

    def window_slice(self, offset):
        return (slice(None),) + tuple(slice(o * d, o * d + s * (n - 1) + 1, s) for o, d, s, n in
                                      zip(offset, self.dilation, self.strides, self.out)) + (slice(None),)

    def pad(self, xp, x, value=0.0):
        if not any(before or after for before, after in self.pads):
            return x
        return xp.pad(x, [(0, 0)] + list(self.pads) + [(0, 0)], constant_values=value)

    def unpad(self, x):
        return x[(slice(None),) + tuple(slice(b, b + n - b - a) for (b, a), n in zip(self.pads, self.padded))]


class Conv3D(Function):
    def __init__(self, geometry):
        self.geometry = geometry

    def forward(self, x, kernel):
        xp = self.device.xp
        g = self.geometry
        padded = g.pad(xp, x)
        out = xp.zeros((x.shape[0],) + g.out + (kernel.shape[-1],), dtype=x.dtype)
        for offset in g.offsets():
            out += xp.matmul(padded[g.window_slice(offset)], kernel[offset])
        self.save_for_backward(x, kernel)
        return out

    def backward(self, grad):
        xp = self.device.xp
        g = self.geometry
        x, kernel = self.saved
        padded = g.pad(xp, x)
        grad_padded = xp.zeros_like(padded)
        grad_kernel = xp.zeros_like(kernel)
        flat_grad = grad.reshape(-1, grad.shape[-1])
        for offset in g.offsets():
            window = g.window_slice(offset)
            grad_padded[window] += xp.matmul(grad, kernel[offset].T)
            grad_kernel[offset] = padded[window].reshape(-1, x.shape[-1]).T @ flat_grad
        return g.unpad(grad_padded), grad_kernel


class _Pool3D(Function):
    def __init__(self, geometry, kind):
        self.geometry, self.kind = geometry, kind

    def forward(self, x):
        xp = self.device.xp
        g = self.geometry
        if self.kind == "max":
            padded = g.pad(xp, x, -numpy.inf)
            windows = xp.stack([padded[g.window_slice(o)] for o in g.offsets()])
            winner = windows.argmax(axis=0)
            self.save_for_backward(winner)
            self.input_shape = x.shape
            return xp.take_along_axis(windows, winner[None], axis=0)[0]
        ones = g.pad(xp, xp.ones((1,) + x.shape[1:-1] + (1,), dtype=x.dtype))
        padded = g.pad(xp, x)
        total = sum(padded[g.window_slice(o)] for o in g.offsets())
        counts = sum(ones[g.window_slice(o)] for o in g.offsets())
        self.save_for_backward(counts)
        self.input_shape = x.shape
        return total / counts

    def backward(self, grad):
        xp = self.device.xp
        g = self.geometry
        (saved,) = self.saved
        grad_padded = xp.zeros((self.input_shape[0],) + g.padded + (self.input_shape[-1],), dtype=grad.dtype)
        share = None if self.kind == "max" else grad / saved
        for index, offset in enumerate(g.offsets()):
            window = g.window_slice(offset)
            grad_padded[window] += grad * (saved == index) if self.kind == "max" else share
        return (g.unpad(grad_padded),)


def _check_input(op_name, x):
    x = _as_tensor(op_name, x)
    if x.ndim != 5:
        raise ValueError(f"{op_name} expects a 5-D input (batch, depth, height, width, channels), received shape "
                         f"{x.shape}.")
    return x


def conv3d(x, kernel, strides=1, padding="valid", dilation_rate=1):
    """3-D convolution, channels last (Keras's ``ops.conv`` on volumes).

    Args:
        x: ``(batch, depth, height, width, in_channels)``.
        kernel: ``(kd, kh, kw, in_channels, filters)``.
        strides, dilation_rate: an int or 3 ints (not both above 1).
        padding: "valid" or "same".

    Returns:
        ``(batch, out_depth, out_height, out_width, filters)``.

    Raises:
        ValueError: ranks, channel counts or arguments do not fit.
    """
    x, kernel = _check_input("conv3d", x), _as_tensor("conv3d", kernel)
    if kernel.ndim != 5 or kernel.shape[3] != x.shape[-1]:
        raise ValueError(f"conv3d expects a kernel (kd, kh, kw, {x.shape[-1]}, filters) for input shape {x.shape}, "
                         f"received kernel shape {kernel.shape}.")
    strides, dilation = _triple("conv3d", "strides", strides), _triple("conv3d", "dilation_rate", dilation_rate)
    geometry = _Geometry("conv3d", x.shape[1:4], kernel.shape[:3], strides, dilation,
                         check_padding("conv3d", padding))
    # 16-bit inputs run in float32 as conv2d's do: CuPy 14 has no batched bfloat16 matmul.
    return in_float32(Conv3D(geometry), x, kernel)


def _pool(op_name, kind, x, pool_size, strides, padding):
    x = _check_input(op_name, x)
    pool_size = _triple(op_name, "pool_size", pool_size)
    strides = pool_size if strides is None else _triple(op_name, "strides", strides)
    geometry = _Geometry(op_name, x.shape[1:4], pool_size, strides, (1, 1, 1), check_padding(op_name, padding))
    return _Pool3D(geometry, kind).apply(x)


def max_pool3d(x, pool_size=2, strides=None, padding="valid"):
    """Max over ``pool_size`` windows of a 5-D channels-last volume
    (strides default to ``pool_size``)."""
    return _pool("max_pool3d", "max", x, pool_size, strides, padding)


def avg_pool3d(x, pool_size=2, strides=None, padding="valid"):
    """Mean over ``pool_size`` windows of a 5-D channels-last volume; with
    "same" padding the padded cells are not counted."""
    return _pool("avg_pool3d", "avg", x, pool_size, strides, padding)
