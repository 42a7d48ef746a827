"""Transposed 3-D convolution (Keras Conv3DTranspose), channels last.

It is conv3d's gradient with respect to conv3d's input, so it reuses
conv3d's window geometry (``ops/nn/conv3d.py``) run backwards: for every
kernel offset the input times that offset's ``(out, in)`` matrix,
transposed, is added into one strided slice of the (padded) output. Its
backward is therefore a conv3d forward for the input's gradient and, for
the kernel, one product per offset of the same slices. As conv3d, no patch
matrix is built. The output size and "same" padding are TensorFlow's
``conv3d_transpose`` (Keras's TensorFlow backend), shared with the 1-D and
2-D transposed convolutions (``conv_transpose._output_length``).
"""
from minikeras.autograd import Function
from minikeras.autograd.function import in_float32
from minikeras.ops.math.unary import _as_tensor
from minikeras.ops.nn.conv3d import _Geometry, _check_input, _triple
from minikeras.ops.nn.conv_transpose import _output_length
from minikeras.ops.nn.sliding_window import check_padding, is_int

__all__ = ["conv3d_transpose"]


class Conv3DTranspose(Function):
    """``geometry`` describes the conv3d whose input is this op's output."""

    def __init__(self, geometry, output_shape):
        self.geometry, self.output_shape = geometry, output_shape

    def forward(self, x, kernel):
        xp = self.device.xp
        g = self.geometry
        self.kernel_shape = kernel.shape
        padded = xp.zeros((x.shape[0],) + g.padded + (kernel.shape[3],), dtype=xp.result_type(x, kernel))
        for offset in g.offsets():
            padded[g.window_slice(offset)] += xp.matmul(x, kernel[offset].T)
        needs_x, needs_kernel = self.needs_input_grad
        self.save_for_backward(x if needs_kernel else None, kernel if needs_x else None)
        return xp.ascontiguousarray(g.unpad(padded))

    def backward(self, grad):
        xp = self.device.xp
        g = self.geometry
        x, kernel = self.saved
        padded = g.pad(xp, grad)
        grad_x = None if kernel is None else xp.zeros((grad.shape[0],) + g.out + (kernel.shape[4],), dtype=grad.dtype)
        grad_kernel = None if x is None else xp.zeros(self.kernel_shape, dtype=grad.dtype)
        flat_x = None if x is None else x.reshape(-1, x.shape[-1])
        for offset in g.offsets():
            window = padded[g.window_slice(offset)]
            if grad_x is not None:
                grad_x += xp.matmul(window, kernel[offset])
            if grad_kernel is not None:
                grad_kernel[offset] = window.reshape(-1, window.shape[-1]).T @ flat_x
        return grad_x, grad_kernel


def _output_padding(output_padding, strides):
    values = (output_padding,) * 3 if is_int(output_padding) else output_padding
    valid = isinstance(values, (tuple, list)) and len(values) == 3 and all(is_int(v) and v >= 0 for v in values)
    if not valid or any(v >= s for v, s in zip(values, strides)):
        raise ValueError(f"conv3d_transpose: output_padding must be non-negative ints smaller than the strides "
                         f"{strides}, received {output_padding!r}.")
    return tuple(int(v) for v in values)


def conv3d_transpose(x, kernel, strides=1, padding="valid", output_padding=None, dilation_rate=1):
    """Transposed 3-D convolution (conv3d's gradient w.r.t. its input).

    Args:
        x: ``(batch, depth, height, width, in_channels)``.
        kernel: ``(kd, kh, kw, out_channels, in_channels)``, Keras
            Conv3DTranspose's layout.
        strides, dilation_rate: an int or 3 ints.
        padding: "valid" or "same".
        output_padding: None, an int or 3 ints, each smaller than its stride.

    Returns:
        ``(batch, out_depth, out_height, out_width, out_channels)``, each
        size as Keras's ``deconv_output_length``.

    Raises:
        ValueError: ranks, channel counts or arguments do not fit.
    """
    op_name = "conv3d_transpose"
    x, kernel = _check_input(op_name, x), _as_tensor(op_name, kernel)
    if kernel.ndim != 5 or kernel.shape[4] != x.shape[-1]:
        raise ValueError(f"{op_name} expects a kernel (kd, kh, kw, out_channels, {x.shape[-1]}) for input shape "
                         f"{x.shape}, received kernel shape {kernel.shape}.")
    strides = _triple(op_name, "strides", strides)
    dilation = _triple(op_name, "dilation_rate", dilation_rate)
    padding = check_padding(op_name, padding)
    extra = (None,) * 3 if output_padding is None else _output_padding(output_padding, strides)
    spatial = tuple(_output_length(size, k, s, d, padding, e)
                    for size, k, s, d, e in zip(x.shape[1:4], kernel.shape[:3], strides, dilation, extra))
    geometry = _Geometry(op_name, spatial, kernel.shape[:3], strides, dilation, padding)
    if geometry.out != tuple(x.shape[1:4]):
        raise ValueError(f"{op_name}: output_padding {output_padding!r} gives an output of spatial shape {spatial} "
                         f"whose convolution has size {geometry.out}, not the input's {tuple(x.shape[1:4])}.")
    output_shape = (x.shape[0],) + spatial + (kernel.shape[3],)
    return in_float32(Conv3DTranspose(geometry, output_shape), x, kernel)  # CuPy cannot batch-matmul bfloat16
