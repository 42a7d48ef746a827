"""Per-channel work over a (rows, channels) array: the grid, and a deterministic two-stage reduction.

A BatchNorm's statistics and its backward's sums reduce a (N*H*W, C) array
over its rows: tens of thousands of rows, a few dozen to a few thousand
channels. One block per channel would leave the GPU idle, so a launch is a
grid of (column tiles, row chunks) blocks (:func:`channel_grid`), each
thread owning a vector of channels (``Pack<V>``: 16 bytes where aligned,
its constants in registers) and walking rows; for a reduction, each block
writes its chunk's partial sums, and the last block of each column tile to
finish (a per-tile counter, reset by that block for the next launch) adds
the partials in chunk order, then the block's lanes in a fixed tree
(``two_stage_sums``). The order of every addition is fixed by the grid:
the same bits on every run, no float atomics, one launch.

``DISPATCH`` calls a ``<name>_packs<V>`` template for the run-time vector
width V (4 floats, 2 or 1).
"""
from minikeras.kernels.cuda_common import EXACT_SOURCE, INDEX_LIMIT, PACK_SOURCE, vector_width
from minikeras.kernels.kernel import UnsupportedDtype

THREADS = 256
ROWS_PER_THREAD = 16  # rows a thread walks at least
MAX_REDUCTION_BLOCKS = 640  # ~5 per SM of an H100: the last block of a tile then adds few partials
MAX_CHUNKS = 65535  # gridDim.y

DISPATCH = r"""
    if (vector == 4 && sizeof(scalar_t) == 4) {{
        {name}_packs<4>({arguments});
    }} else if (vector == 2) {{
        {name}_packs<2>({arguments});
    }} else {{
        {name}_packs<1>({arguments});
    }}
"""

# A two-stage per-channel reduction of two sums, as a template: ``accumulate(row_offset, s1, s2)``
# adds one row's pack into the sums, ``finish(c, k, total1, total2)`` writes channel c's results.
REDUCTION_SOURCE = PACK_SOURCE + EXACT_SOURCE + r"""
#define BN_LANES (2 * 256 * (16 / (int)sizeof(scalar_t)))
template <int V>
__device__ __forceinline__ void tree_sum(scalar_t* lanes, Pack<V>& s1, Pack<V>& s2) {
    /* Sum s1, s2 over threadIdx.y in a fixed pairing (deterministic); row 0 of the block ends with the totals. */
    const int stride = blockDim.x * V, at = (threadIdx.y * blockDim.x + threadIdx.x) * V;
    scalar_t* second = lanes + blockDim.y * stride;
#pragma unroll
    for (int k = 0; k < V; ++k) { lanes[at + k] = s1.v[k]; second[at + k] = s2.v[k]; }
    __syncthreads();
    for (int half = blockDim.y / 2; half > 0; half /= 2) {
        if ((int)threadIdx.y < half) {
#pragma unroll
            for (int k = 0; k < V; ++k) {
                lanes[at + k] = add_rn(lanes[at + k], lanes[at + half * stride + k]);
                second[at + k] = add_rn(second[at + k], second[at + half * stride + k]);
            }
        }
        __syncthreads();
    }
#pragma unroll
    for (int k = 0; k < V; ++k) { s1.v[k] = lanes[threadIdx.x * V + k]; s2.v[k] = second[threadIdx.x * V + k]; }
}

template <int V, class Accumulate, class Finish>
__device__ __forceinline__ void two_stage_sums(scalar_t* lanes, int* last, scalar_t* partial, int* counters, int rows,
                                               int columns, Accumulate accumulate, Finish finish) {
    /* blockDim (TX, TY), grid (column tiles, row chunks); partial is (chunks, 2, columns). */
    typedef Pack<V> P;
    const int vectors = columns / V;
    const int column = blockIdx.x * blockDim.x + threadIdx.x;  /* a vector of channels */
    const bool active = column < vectors;
    P s1, s2;
#pragma unroll
    for (int k = 0; k < V; ++k) { s1.v[k] = (scalar_t)0; s2.v[k] = (scalar_t)0; }
    if (active) {
        const unsigned int step = blockDim.y * gridDim.y;
        /* unrolled: four rows' loads in flight per thread (a reduction has few blocks) */
#pragma unroll 4
        for (unsigned int row = blockIdx.y * blockDim.y + threadIdx.y; row < (unsigned int)rows; row += step) {
            accumulate((size_t)row * vectors + column, s1, s2);
        }
    }
    tree_sum<V>(lanes, s1, s2);
    if (threadIdx.y == 0 && active) {
#pragma unroll
        for (int k = 0; k < V; ++k) {
            partial[(blockIdx.y * 2) * (size_t)columns + column * V + k] = s1.v[k];
            partial[(blockIdx.y * 2 + 1) * (size_t)columns + column * V + k] = s2.v[k];
        }
    }
    __threadfence();  /* the partials are visible to every block before this block is counted */
    __syncthreads();
    if (threadIdx.x == 0 && threadIdx.y == 0) *last = atomicAdd(counters + blockIdx.x, 1) == (int)gridDim.y - 1;
    __syncthreads();
    if (!*last) return;
    /* The last block of this column tile: lane y adds chunks y, y + TY, ... in order, then the lanes add up. */
#pragma unroll
    for (int k = 0; k < V; ++k) { s1.v[k] = (scalar_t)0; s2.v[k] = (scalar_t)0; }
    if (active) {
        for (unsigned int chunk = threadIdx.y; chunk < gridDim.y; chunk += blockDim.y) {
#pragma unroll
            for (int k = 0; k < V; ++k) {
                s1.v[k] = add_rn(s1.v[k], __ldcg(partial + (chunk * 2) * (size_t)columns + column * V + k));
                s2.v[k] = add_rn(s2.v[k], __ldcg(partial + (chunk * 2 + 1) * (size_t)columns + column * V + k));
            }
        }
    }
    tree_sum<V>(lanes, s1, s2);
    if (threadIdx.y == 0 && active) {
#pragma unroll
        for (int k = 0; k < V; ++k) finish(column * V + k, k, s1.v[k], s2.v[k]);
    }
    if (threadIdx.x == 0 && threadIdx.y == 0) counters[blockIdx.x] = 0;  /* ready for the next launch */
}
"""

def channel_grid(rows, columns, vector, max_blocks=None):
    """``(grid, block)`` over a (rows, columns) array in vectors of ``vector``: a block is TX
    vectors of channels (a power of two up to 32) by 256 / TX rows; ``max_blocks`` caps the
    blocks of a reduction (whose last block adds one partial per row chunk)."""
    vectors = columns // vector
    tx = min(32, 1 << (vectors - 1).bit_length())
    ty = THREADS // tx
    tiles = -(-vectors // tx)
    chunks = -(-rows // (ty * ROWS_PER_THREAD))
    chunks = min(chunks, MAX_CHUNKS) if max_blocks is None else min(chunks, max(1, max_blocks // tiles))
    return (tiles, max(1, chunks)), (tx, ty)


def channels_view(launcher, view, *arrays):
    """``(rows, columns, vector)`` of a 2-D C-contiguous ``view`` the kernels take, or raise
    UnsupportedDtype (the reference runs)."""
    launcher.check(view.dtype, *(a.dtype for a in arrays if a is not None))
    if view.ndim != 2 or not view.flags.c_contiguous or view.size == 0:
        raise UnsupportedDtype("the batch-norm kernels take a non-empty C-contiguous (rows, channels) view.")
    rows, columns = view.shape
    if rows > INDEX_LIMIT or columns > INDEX_LIMIT:
        raise UnsupportedDtype("the batch-norm kernels index rows and channels in 32 bits.")
    if any(a is not None and a.dtype != view.dtype for a in arrays):
        raise UnsupportedDtype("the batch-norm kernels take one dtype.")
    vector = vector_width(columns, view.itemsize, *(a.data.ptr for a in (view,) + arrays if a is not None))
    return rows, columns, vector
