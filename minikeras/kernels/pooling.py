"""Max and average pooling, forward and backward, one kernel each.

The references are the CPU's code: one vectorised pass per window offset
over strided views of the (N, H, W, C) input, clipped at the border instead
of padded (``geometry.offsets``, from ``ops/nn/sliding_window.py``); on a
GPU each of those passes would be several launches (about 23 per 2x2 max
pooling, forward and backward), so the CUDA kernels do the whole window
per thread instead:

- forward: one thread per output element loops over its window;
- backward: one thread per *input* element gathers from the windows that
  cover it, in the same window order as the reference's offsets, so no
  atomics, no zero fill, and the sums round as the reference's do.

``geometry`` is a ``WindowGeometry`` (duck-typed: batch, height, width,
channels, out_h, out_w, window, strides, pads, has_padding, offsets).

Max pooling's saved index is the winning offset of each window, first in
row-major window order on ties; the reference numbers offsets by their
position in ``geometry.offsets`` (uint8 when there are at most 256), the
CUDA kernel by ``di * window_width + dj`` (int32). Each device's backward
reads its own forward's index, so the two numberings never meet.
"""
import functools

import numpy

from minikeras.backend.dtypes import is_float_dtype
from minikeras.kernels.kernel import Kernel, UnsupportedDtype, blocks_for, register

_GEOMETRY_ARGUMENTS = ("long long batch, long long height, long long width, long long channels, long long out_h, "
                       "long long out_w, int window_h, int window_w, int stride_h, int stride_w, int pad_top, "
                       "int pad_left")


def _geometry_arguments(geometry):
    (pad_top, _), (pad_left, _) = geometry.pads
    return _geometry_values(geometry.batch, geometry.height, geometry.width, geometry.channels, geometry.out_h,
                            geometry.out_w, *geometry.window, *geometry.strides, pad_top, pad_left)


@functools.lru_cache(maxsize=256)
def _geometry_values(*sizes):
    """The launch's twelve geometry arguments as the C types of
    ``_GEOMETRY_ARGUMENTS``, made once per geometry (every step launches the same ones)."""
    return tuple(numpy.int64(value) for value in sizes[:6]) + tuple(numpy.int32(value) for value in sizes[6:])


def _output_shape(geometry):
    return (geometry.batch, geometry.out_h, geometry.out_w, geometry.channels)


def _input_shape(geometry):
    return (geometry.batch, geometry.height, geometry.width, geometry.channels)


def _disjoint(geometry):
    return geometry.strides[0] >= geometry.window[0] and geometry.strides[1] >= geometry.window[1]


def _tiling(geometry):
    """Windows that tile the input exactly (every input element in one window)."""
    return (tuple(geometry.strides) == tuple(geometry.window) and not geometry.has_padding
            and geometry.out_h * geometry.strides[0] == geometry.height
            and geometry.out_w * geometry.strides[1] == geometry.width)


def _gradient_buffer(xp, geometry, dtype):
    """Where a reference backward writes (uninitialised when every element gets written)."""
    return xp.empty(_input_shape(geometry), dtype) if _tiling(geometry) else xp.zeros(_input_shape(geometry), dtype)


# Per thread: decompose the flat NHWC position of an output (or input) element.
_OUTPUT_POSITION = """
        const long long c = o % channels;
        long long rest = o / channels;
        const long long ow = rest % out_w;
        rest /= out_w;
        const long long oh = rest % out_h;
        const long long n = rest / out_h;
"""
# Per thread of a backward: the windows covering input (n, h, w, c), in window order.
_COVERING_WINDOWS = """
        const long long c = i % channels;
        long long rest = i / channels;
        const long long w = rest % width;
        rest /= width;
        const long long h = rest % height;
        const long long n = rest / height;
        scalar_t total = 0;
        for (int di = 0; di < window_h; ++di) {
            const long long row = h + pad_top - di;
            if (row < 0 || row % stride_h != 0 || row / stride_h >= out_h) continue;
            for (int dj = 0; dj < window_w; ++dj) {
                const long long column = w + pad_left - dj;
                if (column < 0 || column % stride_w != 0 || column / stride_w >= out_w) continue;
                const long long o = ((n * out_h + row / stride_h) * out_w + column / stride_w) * channels + c;
"""

# ------------------------------------------------------------------ max pool
MAX_POOL_SOURCE = (
    "extern \"C\" __global__ void max_pool(const scalar_t* x, scalar_t* out, int* index, int keep_index, "
    + _GEOMETRY_ARGUMENTS + ") {\n"
    + r"""    const long long count = batch * out_h * out_w * channels;
    for (long long o = blockIdx.x * (long long)blockDim.x + threadIdx.x; o < count;
         o += (long long)blockDim.x * gridDim.x) {""" + _OUTPUT_POSITION + r"""
        scalar_t best = 0;
        int best_position = -1;
        for (int di = 0; di < window_h; ++di) {
            const long long h = oh * stride_h - pad_top + di;
            if (h < 0 || h >= height) continue;
            for (int dj = 0; dj < window_w; ++dj) {
                const long long w = ow * stride_w - pad_left + dj;
                if (w < 0 || w >= width) continue;
                const scalar_t value = x[((n * height + h) * width + w) * channels + c];
                /* Strictly greater: the first maximum in window order wins; NaN propagates
                   to the value (as numpy.maximum) without taking the index. */
                if (best_position < 0 || value > best) {
                    best = value;
                    best_position = di * window_w + dj;
                } else if (value != value) {
                    best = value;
                }
            }
        }
        out[o] = best;
        if (keep_index) index[o] = best_position;
    }
}
"""
)


def max_pool_reference(device, images, geometry, keep_index):
    """``(out, index or None)``: the window maxima of ``images`` (N, H, W, C)
    and, with ``keep_index``, each window's winning offset."""
    xp = device.xp
    shape = _output_shape(geometry)
    offsets = geometry.offsets
    index = None
    if keep_index:
        index_dtype = numpy.uint8 if len(offsets) <= 256 else numpy.int32
        index = xp.zeros(shape, index_dtype)
    if geometry.has_padding:
        out = xp.full(shape, -numpy.inf if is_float_dtype(images.dtype) else numpy.iinfo(images.dtype).min,
                      images.dtype)
        first = 0
    else:
        out = xp.empty(shape, images.dtype)
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
                xp.maximum(winner, (candidate > target) * index.dtype.type(position), out=winner)
            xp.maximum(target, candidate, out=target)

    device.row_blocks(pool, geometry.batch, images.size)
    return out, index


def _max_pool_launch(launcher, device, images, geometry, keep_index):
    xp = device.xp
    images = xp.ascontiguousarray(images)
    out = xp.empty(_output_shape(geometry), images.dtype)
    # Without keep_index the kernel writes no index: a one-element stand-in of the right type.
    index = xp.empty(_output_shape(geometry) if keep_index else (1,), numpy.int32)
    grid, block = blocks_for(out.size)
    launcher.run(images.dtype, grid, block, (images, out, index, numpy.int32(keep_index))
                 + _geometry_arguments(geometry))
    return out, (index if keep_index else None)


register(Kernel("max_pool", max_pool_reference, MAX_POOL_SOURCE, _max_pool_launch))

MAX_POOL_BACKWARD_SOURCE = (
    "extern \"C\" __global__ void max_pool_backward(const scalar_t* grad, const int* index, scalar_t* grad_x, "
    + _GEOMETRY_ARGUMENTS + ") {\n"
    + r"""    const long long count = batch * height * width * channels;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < count;
         i += (long long)blockDim.x * gridDim.x) {""" + _COVERING_WINDOWS + r"""
                if (index[o] == di * window_w + dj) total += grad[o];
            }
        }
        grad_x[i] = total;
    }
}
"""
)


def max_pool_backward_reference(device, grad, index, geometry):
    """The input's gradient: each window's gradient routed to its winner."""
    xp = device.xp
    grad = grad.reshape(index.shape)
    grad_x = _gradient_buffer(xp, geometry, grad.dtype)
    disjoint = _disjoint(geometry)

    def route(start, stop):
        for position, (_, _, (out_rows, in_rows), (out_cols, in_cols)) in enumerate(geometry.offsets):
            won = index[start:stop, out_rows, out_cols] == position
            if disjoint:
                xp.multiply(grad[start:stop, out_rows, out_cols], won, out=grad_x[start:stop, in_rows, in_cols])
            else:
                grad_x[start:stop, in_rows, in_cols] += grad[start:stop, out_rows, out_cols] * won

    device.row_blocks(route, geometry.batch, grad_x.size)
    return grad_x


def _max_pool_backward_launch(launcher, device, grad, index, geometry):
    if index.dtype != numpy.int32:
        # The forward ran its reference (a dtype without CUDA source): its index numbers
        # offsets its own way, so the reference routes the gradient too.
        raise UnsupportedDtype(f"max_pool_backward: an index of dtype {index.dtype} comes from the reference.")
    xp = device.xp
    grad = xp.ascontiguousarray(grad)
    grad_x = xp.empty(_input_shape(geometry), grad.dtype)
    grid, block = blocks_for(grad_x.size)
    launcher.run(grad.dtype, grid, block, (grad, index, grad_x) + _geometry_arguments(geometry))
    return grad_x


register(Kernel("max_pool_backward", max_pool_backward_reference, MAX_POOL_BACKWARD_SOURCE,
                _max_pool_backward_launch))

# ------------------------------------------------------------------ avg pool
# 1 / (real elements in the window at (oh, ow)): padding is not counted, as TensorFlow.
_WINDOW_SCALE = r"""
__device__ scalar_t window_scale(long long oh, long long ow, long long height, long long width, int window_h,
                                 int window_w, int stride_h, int stride_w, int pad_top, int pad_left) {
    const long long top = oh * stride_h - pad_top, left = ow * stride_w - pad_left;
    const long long rows = min(top + window_h, height) - max(top, 0LL);
    const long long columns = min(left + window_w, width) - max(left, 0LL);
    return (scalar_t)(1.0 / (double)(rows * columns));
}
"""

AVG_POOL_SOURCE = _WINDOW_SCALE + (
    "extern \"C\" __global__ void avg_pool(const scalar_t* x, scalar_t* out, " + _GEOMETRY_ARGUMENTS + ") {\n"
    + r"""    const long long count = batch * out_h * out_w * channels;
    for (long long o = blockIdx.x * (long long)blockDim.x + threadIdx.x; o < count;
         o += (long long)blockDim.x * gridDim.x) {""" + _OUTPUT_POSITION + r"""
        scalar_t total = 0;
        for (int di = 0; di < window_h; ++di) {
            const long long h = oh * stride_h - pad_top + di;
            if (h < 0 || h >= height) continue;
            for (int dj = 0; dj < window_w; ++dj) {
                const long long w = ow * stride_w - pad_left + dj;
                if (w < 0 || w >= width) continue;
                total += x[((n * height + h) * width + w) * channels + c];
            }
        }
        out[o] = total * window_scale(oh, ow, height, width, window_h, window_w, stride_h, stride_w, pad_top,
                                      pad_left);
    }
}
"""
)


def window_scale(xp, geometry, dtype):
    """1 / (elements per window): a Python float, or an (Ho, Wo, 1) array with padding."""
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


def avg_pool_reference(device, images, geometry):
    """The window means of ``images`` (N, H, W, C) over their real elements."""
    xp = device.xp
    out = xp.zeros(_output_shape(geometry), images.dtype)
    for _, _, (out_rows, in_rows), (out_cols, in_cols) in geometry.offsets:
        out[:, out_rows, out_cols] += images[:, in_rows, in_cols]
    out *= window_scale(xp, geometry, images.dtype)
    return out


def _one_thread_per_output(launcher, device, source, out_shape, geometry):
    """Launch ``kernel(source, out, geometry...)`` with one thread per element of a new ``out``."""
    source = device.xp.ascontiguousarray(source)
    out = device.xp.empty(out_shape, source.dtype)
    grid, block = blocks_for(out.size)
    launcher.run(source.dtype, grid, block, (source, out) + _geometry_arguments(geometry))
    return out


def _avg_pool_launch(launcher, device, images, geometry):
    return _one_thread_per_output(launcher, device, images, _output_shape(geometry), geometry)


register(Kernel("avg_pool", avg_pool_reference, AVG_POOL_SOURCE, _avg_pool_launch))

AVG_POOL_BACKWARD_SOURCE = _WINDOW_SCALE + (
    "extern \"C\" __global__ void avg_pool_backward(const scalar_t* grad, scalar_t* grad_x, "
    + _GEOMETRY_ARGUMENTS + ") {\n"
    + r"""    const long long count = batch * height * width * channels;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < count;
         i += (long long)blockDim.x * gridDim.x) {""" + _COVERING_WINDOWS + r"""
                total += grad[o] * window_scale(row / stride_h, column / stride_w, height, width, window_h,
                                                window_w, stride_h, stride_w, pad_top, pad_left);
            }
        }
        grad_x[i] = total;
    }
}
"""
)


def avg_pool_backward_reference(device, grad, geometry):
    """The input's gradient: each window's gradient spread evenly over its real elements."""
    xp = device.xp
    grad = grad.reshape(_output_shape(geometry)) * window_scale(xp, geometry, grad.dtype)
    grad_x = _gradient_buffer(xp, geometry, grad.dtype)
    disjoint = _disjoint(geometry)
    for _, _, (out_rows, in_rows), (out_cols, in_cols) in geometry.offsets:
        if disjoint:
            grad_x[:, in_rows, in_cols] = grad[:, out_rows, out_cols]
        else:
            grad_x[:, in_rows, in_cols] += grad[:, out_rows, out_cols]
    return grad_x


def _avg_pool_backward_launch(launcher, device, grad, geometry):
    return _one_thread_per_output(launcher, device, grad, _input_shape(geometry), geometry)


register(Kernel("avg_pool_backward", avg_pool_backward_reference, AVG_POOL_BACKWARD_SOURCE,
                _avg_pool_backward_launch))
