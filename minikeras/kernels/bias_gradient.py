"""The gradient through ReLU and its sum over rows (the bias gradient), one launch.

A Dense or convolution layer with a bias and ReLU needs, in backward, the
incoming gradient masked by the ReLU output's sign (for its kernel and input
gradients) and that masked gradient summed over the rows (its bias
gradient). As two array calls that is two launches and two passes over the
gradient; this kernel writes the mask and sums it in one.

The sum over rows is a column reduction over up to ~10^5 rows of a few
dozen columns, so one block per column tile would leave the GPU idle: the
rows are split into chunks, each block writes its chunk's partial sums, and
the last block of each column tile to finish (a per-tile counter, reset by
that block for the next launch) adds the partials in chunk order. The order
of every addition is fixed by the grid, so the result is deterministic
(no float atomics), and it is one launch.
"""
import numpy

from minikeras.kernels.kernel import Kernel, UnsupportedDtype, register

TILE_COLUMNS = 32  # threads along a row: one warp reads 32 consecutive columns
LANES = 16  # threads along the rows of a block
ROWS_PER_THREAD = 32  # rows each thread sums before the block's partial is written
MAX_BLOCKS = 2048

RELU_BIAS_BACKWARD_SOURCE = r"""
#define TILE_COLUMNS 32
#define LANES 16
extern "C" __global__ void relu_bias_backward(const scalar_t* grad, const scalar_t* out, scalar_t* masked,
                                              scalar_t* partial, int* counters, scalar_t* grad_bias, long long rows,
                                              long long columns) {
    /* blockDim (TILE_COLUMNS, LANES); grid (column tiles, row chunks). */
    __shared__ scalar_t lanes[LANES][TILE_COLUMNS + 1];
    __shared__ int last;
    const long long column = blockIdx.x * (long long)TILE_COLUMNS + threadIdx.x;
    scalar_t sum = 0;
    if (column < columns) {
        for (long long row = blockIdx.y * (long long)LANES + threadIdx.y; row < rows;
             row += (long long)LANES * gridDim.y) {
            const long long i = row * columns + column;
            const scalar_t value = grad[i] * (scalar_t)(out[i] > 0);
            masked[i] = value;
            sum += value;
        }
    }
    lanes[threadIdx.y][threadIdx.x] = sum;
    __syncthreads();
    if (threadIdx.y == 0 && column < columns) {
        for (int lane = 1; lane < LANES; ++lane) sum += lanes[lane][threadIdx.x];
        partial[blockIdx.y * columns + column] = sum;
    }
    __threadfence();  /* the partial is visible to every block before this block is counted */
    __syncthreads();
    if (threadIdx.x == 0 && threadIdx.y == 0) last = atomicAdd(counters + blockIdx.x, 1) == (int)gridDim.y - 1;
    __syncthreads();
    if (!last) return;
    /* The last block of this column tile: lane k adds chunks k, k + LANES, ... in order, then lane 0 adds the lanes. */
    scalar_t total = 0;
    if (column < columns) {
        for (unsigned int chunk = threadIdx.y; chunk < gridDim.y; chunk += LANES) {
            total += __ldcg(partial + chunk * columns + column);
        }
    }
    lanes[threadIdx.y][threadIdx.x] = total;
    __syncthreads();
    if (threadIdx.y == 0 && column < columns) {
        for (int lane = 1; lane < LANES; ++lane) total += lanes[lane][threadIdx.x];
        grad_bias[column] = total;
    }
    if (threadIdx.x == 0 && threadIdx.y == 0) counters[blockIdx.x] = 0;  /* ready for the next launch */
}
"""


def relu_bias_backward_reference(device, grad, out, target):
    """``(target, its sum over rows)`` with ``target = grad * (out > 0)``
    for 2-D arrays: the gradient through ReLU (whose output ``out`` is its
    own mask) and the bias gradient."""
    device.xp.multiply(grad, out > 0, out=target)
    return target, target.sum(axis=0)


def grid_for(rows, columns):
    """``(grid, block)`` of a launch over a (rows, columns) gradient."""
    tiles = max(1, -(-int(columns) // TILE_COLUMNS))
    chunks = max(1, min(-(-int(rows) // (LANES * ROWS_PER_THREAD)), MAX_BLOCKS // tiles))
    return (tiles, chunks), (TILE_COLUMNS, LANES)


_COUNTERS = {}  # per logical device (one stream each: its launches never overlap): the tiles' counters


def tile_counters(device, tiles):
    """The device's int32 counters, at least ``tiles`` of them, all 0 between launches: a two-stage
    reduction's blocks count themselves in, and the last block of each tile resets its counter."""
    key = getattr(device, "canonical", None), getattr(device, "cuda_id", None)
    counters = _COUNTERS.get(key)
    if counters is None or counters.size < tiles:
        counters = _COUNTERS[key] = device.xp.zeros((max(tiles, 64),), numpy.int32)  # once per device
    return counters


def _relu_bias_backward_launch(launcher, device, grad, out, target):
    xp = device.xp
    launcher.check(out.dtype, target.dtype)
    if not target.flags.c_contiguous:  # the kernel writes it flat; a strided target takes the reference
        raise UnsupportedDtype("relu_bias_backward writes a C-contiguous target; received a strided one.")
    if grad.dtype != target.dtype:
        grad = grad.astype(target.dtype)
    grad = xp.ascontiguousarray(grad)
    out = xp.ascontiguousarray(out)
    rows, columns = grad.shape
    grid, block = grid_for(rows, columns)
    partial = xp.empty((grid[1], columns), target.dtype)
    grad_bias = xp.empty((columns,), target.dtype)
    launcher.run(target.dtype, grid, block, (grad, out, target, partial, tile_counters(device, grid[0]), grad_bias,
                                             numpy.int64(rows), numpy.int64(columns)))
    return target, grad_bias


register(Kernel("relu_bias_backward", relu_bias_backward_reference, RELU_BIAS_BACKWARD_SOURCE,
                _relu_bias_backward_launch))
