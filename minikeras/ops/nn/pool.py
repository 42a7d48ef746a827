"""Max and average pooling, channels-last like TensorFlow/Keras (2-D, and 1-D
through the 2-D code with a height of 1).

Both run one vectorised pass per window offset (pool_h * pool_w of them)
over strided views of the input, clipped at the border instead of padded,
so no im2col and no padded copy is made; with strides equal to the pool
size those views tile the input exactly (the reshape special case, without
the reshape).

Max pooling keeps for backward only the index of the winning offset in each
window (uint8: a quarter of the output's bytes); on ties the first offset in
row-major window order wins and gets the whole gradient, as in TensorFlow
and PyTorch. SAME padding never wins (it counts as -inf). Average pooling
with SAME padding divides by the number of real (non-padded) elements in
each window, as TensorFlow does.
"""

__all__ = ["max_pool1d", "max_pool2d", "avg_pool1d", "avg_pool2d"]

import numpy

from minikeras.backend.dtypes import is_float_dtype
from minikeras.autograd import Function
from minikeras.ops._checks import shape_of
from minikeras.ops.nn.sliding_window import WindowGeometry, as_pair, as_single, check_padding
from minikeras.utils.argument_validation import validate_tensor_input


class _Pool(Function):
    """Shared shape handling: the op works on the 4-D (N, H, W, C) view of its input."""

    def __init__(self, geometry, output_shape):
        self.geometry = geometry
        self.output_shape = output_shape
        strides, window = geometry.strides, geometry.window
        # Windows that cannot overlap let backward assign instead of accumulate;
        # windows that also tile the whole input leave nothing to zero first.
        self.disjoint = strides[0] >= window[0] and strides[1] >= window[1]
        self.tiling = (
            strides == window
            and not geometry.has_padding
            and geometry.out_h * strides[0] == geometry.height
            and geometry.out_w * strides[1] == geometry.width
        )

    def input_gradient_buffer(self, xp, dtype):
        """Where backward writes the input's gradient (uninitialised when every element gets written)."""
        geometry = self.geometry
        shape = (geometry.batch, geometry.height, geometry.width, geometry.channels)
        return xp.empty(shape, dtype) if self.tiling else xp.zeros(shape, dtype)

    def images(self, x):
        geometry = self.geometry
        return x.reshape(geometry.batch, geometry.height, geometry.width, geometry.channels)


class MaxPool(_Pool):
    """Max pooling; see the module docstring for ties and padding."""

    def forward(self, x):
        xp = self.device.xp
        images = self.images(x)
        self.input_shape = x.shape
        geometry = self.geometry
        shape = (geometry.batch, geometry.out_h, geometry.out_w, geometry.channels)
        needs_grad = self.needs_input_grad[0]
        offsets = geometry.offsets
        index = None
        if needs_grad:
            index_dtype = numpy.uint8 if len(offsets) <= 256 else numpy.int32
            index = xp.zeros(shape, index_dtype)
        if geometry.has_padding:
            out = xp.full(shape, -numpy.inf if is_float_dtype(x.dtype) else numpy.iinfo(x.dtype).min, x.dtype)
            first = 0
        else:
            out = xp.empty(shape, x.dtype)
            first = 1  # without padding every offset covers every window: start from the first

        def pool(start, stop):
            if first:
                _, _, (_, in_rows), (_, in_cols) = offsets[0]
                out[start:stop] = images[start:stop, in_rows, in_cols]
            for position in range(first, len(offsets)):
                _, _, (out_rows, in_rows), (out_cols, in_cols) = offsets[position]
                target = out[start:stop, out_rows, out_cols]
                candidate = images[start:stop, in_rows, in_cols]
                if index is not None:
                    # Strictly greater, so the first maximum in window order keeps the
                    # gradient. Offsets come in increasing order, so "index = position
                    # where larger" is a maximum: plain arithmetic, ~100x faster than a
                    # masked assignment when half the mask is set.
                    winner = index[start:stop, out_rows, out_cols]
                    xp.maximum(winner, (candidate > target) * index_dtype(position), out=winner)
                xp.maximum(target, candidate, out=target)

        self.device.row_blocks(pool, geometry.batch, images.size)
        self.save_for_backward(index)
        return out.reshape(self.output_shape)

    def backward(self, grad):
        xp = self.device.xp
        (index,) = self.saved
        geometry = self.geometry
        grad = grad.reshape(index.shape)
        grad_x = self.input_gradient_buffer(xp, grad.dtype)

        def route(start, stop):
            for position, (_, _, (out_rows, in_rows), (out_cols, in_cols)) in enumerate(geometry.offsets):
                won = index[start:stop, out_rows, out_cols] == position
                if self.disjoint:
                    xp.multiply(grad[start:stop, out_rows, out_cols], won, out=grad_x[start:stop, in_rows, in_cols])
                else:
                    grad_x[start:stop, in_rows, in_cols] += grad[start:stop, out_rows, out_cols] * won

        self.device.row_blocks(route, geometry.batch, grad_x.size)
        return grad_x.reshape(self.input_shape)


class AvgPool(_Pool):
    """Average pooling; with SAME padding each window's mean is over its real elements."""

    def forward(self, x):
        xp = self.device.xp
        images = self.images(x)
        self.input_shape = x.shape
        geometry = self.geometry
        shape = (geometry.batch, geometry.out_h, geometry.out_w, geometry.channels)
        out = xp.zeros(shape, x.dtype)
        for _, _, (out_rows, in_rows), (out_cols, in_cols) in geometry.offsets:
            out[:, out_rows, out_cols] += images[:, in_rows, in_cols]
        self.scale = self.window_scale(xp, x.dtype)
        out *= self.scale
        return out.reshape(self.output_shape)

    def window_scale(self, xp, dtype):
        """1 / (elements per window): a Python float, or an (Ho, Wo, 1) array with padding."""
        geometry = self.geometry
        if not geometry.has_padding:
            return 1.0 / (geometry.window[0] * geometry.window[1])
        # Real elements per window = (real rows) x (real columns): count, for each
        # output row, the row offsets that land inside the input (likewise columns).
        row_ranges = {i: out_rows for i, _, (out_rows, _), _ in geometry.offsets}
        col_ranges = {j: out_cols for _, j, _, (out_cols, _) in geometry.offsets}
        rows = numpy.zeros(geometry.out_h)
        cols = numpy.zeros(geometry.out_w)
        for out_rows in row_ranges.values():
            rows[out_rows] += 1
        for out_cols in col_ranges.values():
            cols[out_cols] += 1
        counts = numpy.outer(rows, cols)[:, :, None]
        return xp.asarray((1.0 / counts).astype(dtype))

    def backward(self, grad):
        xp = self.device.xp
        geometry = self.geometry
        grad = grad.reshape(geometry.batch, geometry.out_h, geometry.out_w, geometry.channels) * self.scale
        grad_x = self.input_gradient_buffer(xp, grad.dtype)
        for _, _, (out_rows, in_rows), (out_cols, in_cols) in geometry.offsets:
            if self.disjoint:
                grad_x[:, in_rows, in_cols] = grad[:, out_rows, out_cols]
            else:
                grad_x[:, in_rows, in_cols] += grad[:, out_rows, out_cols]
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
    geometry = WindowGeometry(op_name, images_shape, window, strides, (1, 1), padding, f"input shape {x_shape}")
    if rank == 2:
        out_shape = (x_shape[0], geometry.out_h, geometry.out_w, x_shape[3])
    else:
        out_shape = (x_shape[0], geometry.out_w, x_shape[2])
    return geometry, out_shape
