"""Batch normalisation over the channels of a (rows, channels) view: four kernels.

Training-mode BatchNorm is two passes forward (the per-channel statistics,
then the normalisation) and two backward (the per-channel sums of the
gradient, then the input's gradient): each pass must finish over every row
before the next can start, so each is one launch (with cross-replica
statistics, the all-reduce sits between the backward's two). Done as CuPy
calls they were about a dozen launches each way, and ``sum(axis=0)`` over
(N*H*W, C) ran at 10-20 GB/s on an H100 (benchmarks/NOTES.md).

- ``batch_norm_statistics``: the mean, the biased variance and
  ``1 / sqrt(variance + epsilon)`` per channel, in one launch: row chunks
  write partial sums, the last block of each column tile adds them in chunk
  order (as ``relu_bias_backward``), so the result has the same bits on
  every run. The sums are of ``x - x[0]`` (each channel shifted by its
  first row: the shifted-data algorithm, so ``E[d^2] - E[d]^2`` keeps its
  precision when the mean is large against the spread).
- ``batch_norm_normalize``: ``((x - mean) * inv_std) * gamma + beta``.
- ``batch_norm_backward_sums``: ``sum(g)`` and ``sum(g * x_hat)`` per channel,
  with ``x_hat`` recomputed from ``x`` (the forward saves ``x``, not
  ``x_hat``: one pass over memory fewer), two-stage like the statistics.
- ``batch_norm_backward_input``: ``scale * (g - x_hat * mean(g * x_hat) - mean(g))``.

Every kernel reads and writes 16-byte vectors of channels where the
channels and pointers allow, a thread keeping its channels' constants in
registers and walking rows: no division in any index.

The references are the CPU's code as it was in ``ops/nn/normalization.py``
(blocks of rows over the op threads, summed in block order), any layout
(``axes``: the reduced axes); they save ``x_hat`` and pass their scratch
arrays along (``scratch``), the kernels save ``x`` and need none. The
kernels take the 2-D channels-last view only; the rest runs the references.
"""
import numpy

from minikeras.backend.blocks import sum_in_order
from minikeras.kernels.bias_gradient import tile_counters
from minikeras.kernels.channel_reduction import (DISPATCH, MAX_REDUCTION_BLOCKS, REDUCTION_SOURCE, channel_grid,
                                                 channels_view)
from minikeras.kernels.cuda_common import EXACT_SOURCE, PACK_SOURCE
from minikeras.kernels.kernel import Kernel, UnsupportedDtype, register

STATISTICS_SOURCE = REDUCTION_SOURCE + r"""
template <int V>
__device__ __forceinline__ void statistics_packs(scalar_t* lanes, int* last, const scalar_t* __restrict__ x,
                                                 scalar_t* partial, int* counters, scalar_t* mean, scalar_t* variance,
                                                 scalar_t* inv_std, int rows, int columns, scalar_t epsilon) {
    typedef Pack<V> P;
    const P* packs = reinterpret_cast<const P*>(x);
    const int column = blockIdx.x * blockDim.x + threadIdx.x;
    P shift;  /* the channel's first row: the sums are of x - shift */
#pragma unroll
    for (int k = 0; k < V; ++k) shift.v[k] = (scalar_t)0;
    if (column < columns / V) shift = packs[column];
    const scalar_t count = (scalar_t)rows;
    two_stage_sums<V>(lanes, last, partial, counters, rows, columns,
        [&](size_t at, P& s1, P& s2) {
            const P value = packs[at];
#pragma unroll
            for (int k = 0; k < V; ++k) {
                const scalar_t d = value.v[k] - shift.v[k];
                s1.v[k] += d;
                s2.v[k] += d * d;
            }
        },
        [&](int c, int k, scalar_t sum, scalar_t squares) {
            const scalar_t mean_shifted = sum / count;
            scalar_t var = squares / count - mean_shifted * mean_shifted;
            if (!(var > (scalar_t)0)) var = (scalar_t)0;
            mean[c] = shift.v[k] + mean_shifted;
            variance[c] = var;
            inv_std[c] = (scalar_t)1 / sqrt(var + epsilon);
        });
}

extern "C" __global__ void __launch_bounds__(256) batch_norm_statistics(
        const scalar_t* __restrict__ x, scalar_t* partial, int* counters, scalar_t* mean, scalar_t* variance,
        scalar_t* inv_std, int rows, int columns, int vector, scalar_t epsilon) {
    __shared__ scalar_t lanes[BN_LANES];
    __shared__ int last;
""" + DISPATCH.format(name="statistics", arguments="lanes, &last, x, partial, counters, mean, variance, inv_std, "
                                                    "rows, columns, epsilon") + "}\n"


def statistics_reference(device, view, axes, count, epsilon):
    """``(mean, variance, inv_std, scratch)`` per feature of ``view`` over ``axes``
    (kept as size-1 axes); ``scratch`` is ``(view - mean, a buffer)`` for the normalisation."""
    xp = device.xp
    sums = device.row_blocks(lambda start, stop: view[start:stop].sum(axis=axes, keepdims=True), view.shape[0],
                             view.size)
    mean = sum_in_order(xp, sums)
    mean /= count
    centred, out = xp.empty_like(view), xp.empty_like(view)

    def centre(start, stop):
        block = xp.subtract(view[start:stop], mean, out=centred[start:stop])
        return xp.multiply(block, block, out=out[start:stop]).sum(axis=axes, keepdims=True)

    variance = sum_in_order(xp, device.row_blocks(centre, view.shape[0], view.size))
    variance /= count
    inv_std = 1.0 / xp.sqrt(variance + epsilon)
    return mean, variance, inv_std, (centred, out)


def _statistics_launch(launcher, device, view, axes, count, epsilon):
    xp = device.xp
    rows, columns, vector = channels_view(launcher, view)
    grid, block = channel_grid(rows, columns, vector, MAX_REDUCTION_BLOCKS)
    partial = xp.empty((grid[1], 2, columns), view.dtype)
    mean, variance, inv_std = (xp.empty((1, columns), view.dtype) for _ in range(3))
    launcher.run(view.dtype, grid, block, (view, partial, tile_counters(device, grid[0]), mean, variance, inv_std,
                                           numpy.int32(rows), numpy.int32(columns), numpy.int32(vector),
                                           view.dtype.type(epsilon)))
    return mean, variance, inv_std, None


register(Kernel("batch_norm_statistics", statistics_reference, STATISTICS_SOURCE, _statistics_launch))

# ------------------------------------------------------------- normalisation
ELEMENTWISE_SOURCE = PACK_SOURCE + EXACT_SOURCE + r"""
template <int V>
__device__ __forceinline__ Pack<V> channel_pack(const scalar_t* values, bool present, int column, scalar_t absent) {
    /* The constants of one vector of channels (or ``absent``, e.g. without gamma). */
    Pack<V> pack;
#pragma unroll
    for (int k = 0; k < V; ++k) pack.v[k] = present ? values[column * V + k] : absent;
    return pack;
}
"""

NORMALIZE_SOURCE = ELEMENTWISE_SOURCE + r"""
template <int V>
__device__ __forceinline__ void normalize_packs(const scalar_t* __restrict__ x, const scalar_t* mean,
                                                const scalar_t* inv_std, const scalar_t* gamma, const scalar_t* beta,
                                                scalar_t* __restrict__ out, int rows, int columns, bool has_gamma,
                                                bool has_beta) {
    typedef Pack<V> P;
    const int vectors = columns / V;
    const int column = blockIdx.x * blockDim.x + threadIdx.x;
    if (column >= vectors) return;
    const P m = channel_pack<V>(mean, true, column, 0), s = channel_pack<V>(inv_std, true, column, 0);
    const P g = channel_pack<V>(gamma, has_gamma, column, 1), b = channel_pack<V>(beta, has_beta, column, 0);
    const unsigned int step = blockDim.y * gridDim.y;
    for (unsigned int row = blockIdx.y * blockDim.y + threadIdx.y; row < (unsigned int)rows; row += step) {
        const size_t at = (size_t)row * vectors + column;
        P value = reinterpret_cast<const P*>(x)[at];
#pragma unroll
        for (int k = 0; k < V; ++k) {
            /* The reference's operations, in its order: x_hat = (x - mean) * inv_std; out = x_hat * gamma + beta. */
            scalar_t y = mul_rn(sub_rn(value.v[k], m.v[k]), s.v[k]);
            if (has_gamma) y = mul_rn(y, g.v[k]);
            if (has_beta) y = add_rn(y, b.v[k]);
            value.v[k] = y;
        }
        reinterpret_cast<P*>(out)[at] = value;
    }
}

extern "C" __global__ void __launch_bounds__(256) batch_norm_normalize(
        const scalar_t* __restrict__ x, const scalar_t* mean, const scalar_t* inv_std, const scalar_t* gamma,
        const scalar_t* beta, scalar_t* __restrict__ out, int rows, int columns, int vector, int has_gamma,
        int has_beta) {
""" + DISPATCH.format(name="normalize", arguments="x, mean, inv_std, gamma, beta, out, rows, columns, has_gamma != 0, "
                                                   "has_beta != 0") + "}\n"


def normalize_reference(device, view, axes, mean, inv_std, gamma, beta, scratch):
    """``(out, x_hat)``: ``x_hat = (view - mean) * inv_std`` and ``out = x_hat * gamma + beta``
    (gamma, beta: None or shaped to broadcast); ``scratch`` is the statistics' (or None)."""
    xp = device.xp
    if scratch is None:  # statistics from elsewhere (all replicas'): centre here
        scratch = xp.empty_like(view), xp.empty_like(view)
        device.row_blocks(lambda start, stop: xp.subtract(view[start:stop], mean, out=scratch[0][start:stop]),
                          view.shape[0], view.size)
    x_hat, out = scratch

    def finish(start, stop):
        block = x_hat[start:stop]
        block *= inv_std
        if gamma is not None:
            xp.multiply(block, gamma, out=out[start:stop])
        else:
            out[start:stop] = block
        if beta is not None:
            out[start:stop] += beta

    device.row_blocks(finish, view.shape[0], view.size)
    return out, x_hat


def _normalize_launch(launcher, device, view, axes, mean, inv_std, gamma, beta, scratch):
    rows, columns, vector = channels_view(launcher, view, mean, inv_std, gamma, beta)
    out = device.xp.empty_like(view)
    grid, block = channel_grid(rows, columns, vector)
    launcher.run(view.dtype, grid, block, (view, mean, inv_std, mean if gamma is None else gamma,
                                           mean if beta is None else beta, out, numpy.int32(rows),
                                           numpy.int32(columns), numpy.int32(vector), numpy.int32(gamma is not None),
                                           numpy.int32(beta is not None)))
    return out, None


register(Kernel("batch_norm_normalize", normalize_reference, NORMALIZE_SOURCE, _normalize_launch))

# ------------------------------------------------------------------ backward
BACKWARD_SUMS_SOURCE = REDUCTION_SOURCE + r"""
template <int V>
__device__ __forceinline__ void backward_sums_packs(scalar_t* lanes, int* last, const scalar_t* __restrict__ grad,
                                                    const scalar_t* __restrict__ x, const scalar_t* mean,
                                                    const scalar_t* inv_std, scalar_t* partial, int* counters,
                                                    scalar_t* sum_grad, scalar_t* sum_grad_x_hat, int rows,
                                                    int columns) {
    typedef Pack<V> P;
    const int column = blockIdx.x * blockDim.x + threadIdx.x;
    P m, s;
#pragma unroll
    for (int k = 0; k < V; ++k) { m.v[k] = (scalar_t)0; s.v[k] = (scalar_t)0; }
    if (column < columns / V) {
#pragma unroll
        for (int k = 0; k < V; ++k) { m.v[k] = mean[column * V + k]; s.v[k] = inv_std[column * V + k]; }
    }
    two_stage_sums<V>(lanes, last, partial, counters, rows, columns,
        [&](size_t at, P& s1, P& s2) {
            const P g = reinterpret_cast<const P*>(grad)[at], value = reinterpret_cast<const P*>(x)[at];
#pragma unroll
            for (int k = 0; k < V; ++k) {
                s1.v[k] += g.v[k];
                s2.v[k] += g.v[k] * mul_rn(sub_rn(value.v[k], m.v[k]), s.v[k]);
            }
        },
        [&](int c, int k, scalar_t total, scalar_t total_x_hat) {
            sum_grad[c] = total;
            sum_grad_x_hat[c] = total_x_hat;
        });
}

extern "C" __global__ void __launch_bounds__(256) batch_norm_backward_sums(
        const scalar_t* __restrict__ grad, const scalar_t* __restrict__ x, const scalar_t* mean,
        const scalar_t* inv_std, scalar_t* partial, int* counters, scalar_t* sum_grad, scalar_t* sum_grad_x_hat,
        int rows, int columns, int vector) {
    __shared__ scalar_t lanes[BN_LANES];
    __shared__ int last;
""" + DISPATCH.format(name="backward_sums", arguments="lanes, &last, grad, x, mean, inv_std, partial, counters, "
                                                       "sum_grad, sum_grad_x_hat, rows, columns") + "}\n"


def _x_hat(device, x_hat, x, mean, inv_std):
    """The saved normalised input, or (after a kernel's forward, which saves ``x``) made from ``x``."""
    if x_hat is not None:
        return x_hat
    xp = device.xp
    return xp.multiply(xp.subtract(x, mean), inv_std)


def backward_sums_reference(device, grad, x_hat, x, mean, inv_std, axes):
    """``(sum(grad), sum(grad * x_hat), scratch)`` over ``axes`` (kept as size-1 axes);
    ``scratch`` is ``(x_hat, a buffer)`` for the input's gradient."""
    xp = device.xp
    x_hat = _x_hat(device, x_hat, x, mean, inv_std)
    work = xp.empty_like(grad)

    def sums(start, stop):
        block = grad[start:stop]
        product = xp.multiply(block, x_hat[start:stop], out=work[start:stop])
        return block.sum(axis=axes, keepdims=True), product.sum(axis=axes, keepdims=True)

    parts = device.row_blocks(sums, grad.shape[0], grad.size)
    return (sum_in_order(xp, [part[0] for part in parts]), sum_in_order(xp, [part[1] for part in parts]),
            (x_hat, work))


def _backward_sums_launch(launcher, device, grad, x_hat, x, mean, inv_std, axes):
    if x is None:  # a reference forward saved x_hat
        raise UnsupportedDtype("the batch-norm kernels recompute x_hat from x; received x_hat only.")
    xp = device.xp
    grad = xp.ascontiguousarray(grad)
    rows, columns, vector = channels_view(launcher, x, grad, mean, inv_std)
    grid, block = channel_grid(rows, columns, vector, MAX_REDUCTION_BLOCKS)
    partial = xp.empty((grid[1], 2, columns), x.dtype)
    sum_grad, sum_grad_x_hat = xp.empty((1, columns), x.dtype), xp.empty((1, columns), x.dtype)
    launcher.run(x.dtype, grid, block, (grad, x, mean, inv_std, partial, tile_counters(device, grid[0]), sum_grad,
                                        sum_grad_x_hat, numpy.int32(rows), numpy.int32(columns), numpy.int32(vector)))
    return sum_grad, sum_grad_x_hat, None


register(Kernel("batch_norm_backward_sums", backward_sums_reference, BACKWARD_SUMS_SOURCE, _backward_sums_launch))

BACKWARD_INPUT_SOURCE = ELEMENTWISE_SOURCE + r"""
template <int V>
__device__ __forceinline__ void backward_input_packs(const scalar_t* __restrict__ grad, const scalar_t* __restrict__ x,
                                                     const scalar_t* mean, const scalar_t* inv_std,
                                                     const scalar_t* gamma, const scalar_t* sum_grad,
                                                     const scalar_t* sum_grad_x_hat, scalar_t* __restrict__ grad_x,
                                                     int rows, int columns, scalar_t inverse_count, bool has_gamma) {
    typedef Pack<V> P;
    const int vectors = columns / V;
    const int column = blockIdx.x * blockDim.x + threadIdx.x;
    if (column >= vectors) return;
    const P m = channel_pack<V>(mean, true, column, 0), s = channel_pack<V>(inv_std, true, column, 0);
    P scale, x_hat_mean, grad_mean;  /* the reference's, in its order */
#pragma unroll
    for (int k = 0; k < V; ++k) {
        scale.v[k] = has_gamma ? mul_rn(s.v[k], gamma[column * V + k]) : s.v[k];
        x_hat_mean.v[k] = mul_rn(sum_grad_x_hat[column * V + k], inverse_count);
        grad_mean.v[k] = mul_rn(sum_grad[column * V + k], inverse_count);
    }
    const unsigned int step = blockDim.y * gridDim.y;
    for (unsigned int row = blockIdx.y * blockDim.y + threadIdx.y; row < (unsigned int)rows; row += step) {
        const size_t at = (size_t)row * vectors + column;
        const P value = reinterpret_cast<const P*>(x)[at];
        P g = reinterpret_cast<const P*>(grad)[at];
#pragma unroll
        for (int k = 0; k < V; ++k) {
            /* dx = scale * ((g - x_hat * mean(g x_hat)) - mean(g)) */
            const scalar_t x_hat = mul_rn(sub_rn(value.v[k], m.v[k]), s.v[k]);
            g.v[k] = mul_rn(sub_rn(sub_rn(g.v[k], mul_rn(x_hat, x_hat_mean.v[k])), grad_mean.v[k]), scale.v[k]);
        }
        reinterpret_cast<P*>(grad_x)[at] = g;
    }
}

extern "C" __global__ void __launch_bounds__(256) batch_norm_backward_input(
        const scalar_t* __restrict__ grad, const scalar_t* __restrict__ x, const scalar_t* mean,
        const scalar_t* inv_std, const scalar_t* gamma, const scalar_t* sum_grad, const scalar_t* sum_grad_x_hat,
        scalar_t* __restrict__ grad_x, int rows, int columns, int vector, scalar_t inverse_count, int has_gamma) {
""" + DISPATCH.format(name="backward_input", arguments="grad, x, mean, inv_std, gamma, sum_grad, sum_grad_x_hat, "
                                                        "grad_x, rows, columns, inverse_count, has_gamma != 0") + "}\n"


def backward_input_reference(device, grad, x_hat, x, mean, inv_std, gamma, sum_grad, sum_grad_x_hat, count,
                             scratch):
    """The input's gradient ``scale * (grad - x_hat * sum_grad_x_hat / count - sum_grad / count)``,
    ``scale = inv_std * gamma`` (gamma: None or shaped to broadcast); written into the sums'
    scratch buffer when there is one."""
    xp = device.xp
    x_hat, work = scratch if scratch is not None else (_x_hat(device, x_hat, x, mean, inv_std), xp.empty_like(grad))
    scale = inv_std if gamma is None else inv_std * gamma
    x_hat_mean, grad_mean = sum_grad_x_hat * (1.0 / count), sum_grad * (1.0 / count)

    def input_gradient(start, stop):
        block = work[start:stop]
        xp.multiply(x_hat[start:stop], x_hat_mean, out=block)
        xp.subtract(grad[start:stop], block, out=block)
        block -= grad_mean
        block *= scale

    device.row_blocks(input_gradient, grad.shape[0], grad.size)
    return work


def _backward_input_launch(launcher, device, grad, x_hat, x, mean, inv_std, gamma, sum_grad, sum_grad_x_hat, count,
                           scratch):
    if x is None:
        raise UnsupportedDtype("the batch-norm kernels recompute x_hat from x; received x_hat only.")
    xp = device.xp
    grad = xp.ascontiguousarray(grad)
    rows, columns, vector = channels_view(launcher, x, grad, mean, inv_std, gamma, sum_grad, sum_grad_x_hat)
    grad_x = xp.empty_like(x)
    grid, block = channel_grid(rows, columns, vector)
    launcher.run(x.dtype, grid, block, (grad, x, mean, inv_std, mean if gamma is None else gamma, sum_grad,
                                        sum_grad_x_hat, grad_x, numpy.int32(rows), numpy.int32(columns),
                                        numpy.int32(vector), x.dtype.type(1.0 / count), numpy.int32(gamma is not None)))
    return grad_x


register(Kernel("batch_norm_backward_input", backward_input_reference, BACKWARD_INPUT_SOURCE,
                _backward_input_launch))
