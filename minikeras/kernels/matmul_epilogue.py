"""A small matrix product with its bias and ReLU applied before it is written.

A Dense layer's forward is ``relu(x @ kernel + bias)``: on a GPU a cuBLAS GEMM
and then the ``bias_relu`` kernel, two launches and a second pass over the
output. For the products of small models (a batch of 128 rows times a few
hundred columns) the GEMM's arithmetic takes a few microseconds, less than
a launch's host time, so one tiled kernel that adds the bias and applies
ReLU to its accumulators before it stores them is faster end to end than
cuBLAS plus a second kernel. It is not faster for large products, where
cuBLAS's tuned kernels win: ``fits`` keeps this kernel to products of at
most ``tuning.FUSED_MATMUL_MAX_MACS`` multiply-adds, and the op falls back to
``device.matmul`` + ``bias_relu`` above that (and for dtypes without a CUDA
source, through the reference).

The CUDA kernel: 32x32 output tiles, 16x16 threads, each thread four outputs
(two rows, two columns), both operands staged through shared memory 32
along the inner axis at a time. The reference is the CPU's code: the
device's matmul, then ``bias_relu`` in place.
"""
import numpy

from minikeras.backend import tuning
from minikeras.kernels.elementwise import bias_relu_reference
from minikeras.kernels.kernel import Kernel, UnsupportedDtype, register

MATMUL_BIAS_RELU_SOURCE = r"""
#define TILE 32
#define HALF 16
extern "C" __global__ void matmul_bias_relu(const scalar_t* a, const scalar_t* b, const scalar_t* bias, scalar_t* out,
                                            long long rows, long long inner, long long columns, int has_bias,
                                            int relu) {
    /* out (rows, columns) = relu?(a (rows, inner) @ b (inner, columns) + bias), all C-contiguous.
       blockDim (HALF, HALF); grid (column tiles, row tiles). */
    __shared__ scalar_t a_tile[TILE][TILE + 1];  /* [row][k] */
    __shared__ scalar_t b_tile[TILE][TILE + 1];  /* [k][column] */
    const int tx = threadIdx.x, ty = threadIdx.y, thread = ty * HALF + tx;
    const long long row0 = blockIdx.y * (long long)TILE, column0 = blockIdx.x * (long long)TILE;
    scalar_t acc00 = 0, acc01 = 0, acc10 = 0, acc11 = 0;
    for (long long k0 = 0; k0 < inner; k0 += TILE) {
        for (int e = thread; e < TILE * TILE; e += HALF * HALF) {
            const int r = e / TILE, c = e % TILE;
            const long long a_row = row0 + r, a_k = k0 + c, b_k = k0 + r, b_column = column0 + c;
            a_tile[r][c] = (a_row < rows && a_k < inner) ? a[a_row * inner + a_k] : (scalar_t)0;
            b_tile[r][c] = (b_k < inner && b_column < columns) ? b[b_k * columns + b_column] : (scalar_t)0;
        }
        __syncthreads();
#pragma unroll 8
        for (int k = 0; k < TILE; ++k) {
            const scalar_t a0 = a_tile[ty][k], a1 = a_tile[ty + HALF][k];
            const scalar_t b0 = b_tile[k][tx], b1 = b_tile[k][tx + HALF];
            acc00 += a0 * b0;
            acc01 += a0 * b1;
            acc10 += a1 * b0;
            acc11 += a1 * b1;
        }
        __syncthreads();
    }
    const scalar_t results[2][2] = {{acc00, acc01}, {acc10, acc11}};
    for (int i = 0; i < 2; ++i) {
        const long long row = row0 + ty + i * HALF;
        for (int j = 0; j < 2; ++j) {
            const long long column = column0 + tx + j * HALF;
            if (row < rows && column < columns) {
                scalar_t value = results[i][j];
                if (has_bias) value += bias[column];
                if (relu && value < 0) value = 0;  /* NaN stays NaN, as numpy.maximum(value, 0) */
                out[row * columns + column] = value;
            }
        }
    }
}
"""


def fits(rows, inner, columns):
    """Whether a (rows, inner) @ (inner, columns) product is small enough
    for the fused kernel (see the module docstring)."""
    return int(rows) * int(inner) * int(columns) <= tuning.FUSED_MATMUL_MAX_MACS


def matmul_bias_relu_reference(device, a, b, bias, relu):
    """``relu?(a @ b + bias)`` for 2-D ``a`` and ``b``: ``device.matmul``,
    then the bias and ReLU in place (``bias_relu``)."""
    out = device.matmul(a, b)
    if bias is not None or relu:
        bias_relu_reference(device, out, bias, relu)
    return out


def _matmul_bias_relu_launch(launcher, device, a, b, bias, relu):
    xp = device.xp
    if a.dtype != b.dtype:
        raise UnsupportedDtype(f"matmul_bias_relu multiplies operands of one dtype, received {a.dtype} and {b.dtype}.")
    launcher.check(a.dtype)
    a, b = xp.ascontiguousarray(a), xp.ascontiguousarray(b)
    if bias is not None:
        bias = xp.ascontiguousarray(bias if bias.dtype == a.dtype else bias.astype(a.dtype))
    rows, inner = a.shape
    columns = b.shape[1]
    out = xp.empty((rows, columns), a.dtype)
    grid = (max(1, -(-columns // 32)), max(1, -(-rows // 32)))
    launcher.run(a.dtype, grid, (16, 16), (a, b, out if bias is None else bias, out, numpy.int64(rows),
                                           numpy.int64(inner), numpy.int64(columns), numpy.int32(bias is not None),
                                           numpy.int32(relu)))
    return out


register(Kernel("matmul_bias_relu", matmul_bias_relu_reference, MATMUL_BIAS_RELU_SOURCE, _matmul_bias_relu_launch))
