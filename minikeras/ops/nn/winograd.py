"""Winograd F(2x2, 3x3) convolutions on the CPU: forward, input and kernel gradients.

A 3x3 stride-1 convolution computes each 2x2 block of outputs (a tile) from
the 4x4 block of input under it. Winograd's minimal filtering algorithm
writes that as ``Y = A^T [(G g G^T) * (B^T d B)] A``: the kernel ``g`` and
the input tile ``d`` go through small fixed transforms (sums and
differences), the 16 transformed values are multiplied elementwise, summed
over the input channels, and transformed back. Summing over channels is a
matrix product per transformed position, so the whole convolution is 16
batched GEMMs of ``(tiles, C) @ (C, K)``: 16 multiply-adds per tile and
channel pair where im2col needs 36 (2.25x fewer), plus the transforms.

The transforms are NumPy passes, so what decides the speed is how those
passes walk memory. Each block of samples is first copied into a
*de-interleaved* layout ``E[pc, s, pr, t, u, c] = x[s, 2t+pr, 2u+pc, c]``
(with the padding as zeros): in it a row of tiles is one run of memory and
a column of tiles a run of ``tiles * C`` floats, so each transform is a
handful of additions over long runs instead of strided 32-float runs
(measured 2-3x faster per element), and the copies in and out of NHWC
walk both arrays in the same order. The results
(``V[i, j]``, the transformed input) are laid out ``(16, tiles, C)`` for the
GEMMs. The output transform runs on the GEMMs' contiguous results and only
its last step, fused with the bias and ReLU, interleaves the 2x2 tiles back
into the NHWC output.

Backward is the adjoint of the same algorithm (exactly the gradient of what
forward computed): the output gradient, masked by ReLU, is transformed once
(``A dY A^T``) and shared by both gradients, the kernel's (16 GEMMs
``V^T @ dM`` against the input's transform, rebuilt block by block in cache
rather than kept: 4x the input's memory) and the input's (16 GEMMs
``dM @ U^T`` and the adjoint of the input transform, which adds the
overlapping tiles back together). The bias gradient is the sum of one
transformed component (``dM[1, 1]``, the sum of each tile's four values).

Accuracy: F(2x2, 3x3)'s transforms use only 0, +-1 and +-1/2, so float32
results stay within a few units in the last place of im2col's (the error
against float64 is measured in benchmarks/NOTES.md, "Winograd", beside
F(4x4, 3x3)'s, which was not chosen). Blocks of samples have fixed sizes
and their partial sums are added in block order, so the result has the
same bits for any number of op threads.

Only the CPU runs this (``applies``): a GPU keeps im2col + cuBLAS or cuDNN.
Whether a convolution uses it is ``conv_algorithm.choose``'s decision.
"""
import numpy

from minikeras.backend import tuning
from minikeras.backend.blocks import sum_in_order

# The kernel transform of F(2x2, 3x3) (Lavin & Gray 2016); B^T and A^T are
# written out as slab additions below.
_G = numpy.array([[1.0, 0.0, 0.0], [0.5, 0.5, 0.5], [0.5, -0.5, 0.5], [0.0, 0.0, 1.0]])
# The output gradient's transform A dY A^T is stored with A's last row
# negated (no negation pass): component (i, j) holds SIGN[i] * SIGN[j] times
# its true value, and the products that read it are corrected by that sign.
_ROW_SIGN = numpy.array([1.0, 1.0, 1.0, -1.0])
SIGNS = numpy.outer(_ROW_SIGN, _ROW_SIGN).reshape(16)


def applies(device, geometry, dtype):
    """Whether F(2x2, 3x3) can compute this convolution: the CPU, a 3x3
    window, stride and dilation 1, a float32/float64 input with samples."""
    return (device.host_kernels and tuple(geometry.window) == (3, 3) and tuple(geometry.strides) == (1, 1)
            and tuple(geometry.dilation) == (1, 1) and numpy.dtype(dtype).name in ("float32", "float64")
            and geometry.batch > 0 and geometry.out_h > 0 and geometry.out_w > 0)


def kernel_transform(kernel):
    """``G g G^T`` of a (3, 3, C, K) kernel, as (16, C, K) in its dtype (computed in float64)."""
    transformed = numpy.einsum("ai,ijck,bj->abck", _G, kernel.astype(numpy.float64), _G)
    return transformed.reshape((16,) + kernel.shape[2:]).astype(kernel.dtype)


def kernel_transform_adjoint(grad_transformed, dtype):
    """``G^T dU G``: the kernel's gradient (3, 3, C, K) from that of its transform (16, C, K)."""
    grad = grad_transformed.astype(numpy.float64).reshape((4, 4) + grad_transformed.shape[1:])
    return numpy.einsum("ai,abck,bj->ijck", _G, grad, _G).astype(dtype)


class Tiling:
    """How one convolution's output is cut into 2x2 tiles.

    Attributes:
        rows, cols: tiles down and across (the output rounded up to even).
        row_spans, col_spans: per parity p (0, 1) of the padded input,
            ``(first tile, end tile, first input index)`` of the tiles whose
            position ``2t + p`` lies inside the unpadded input, or None.
        out_rows, out_cols: per parity a (0, 1) of the output, how many
            tiles have their row (column) ``2t + a`` inside the output.
    """

    def __init__(self, geometry):
        self.geometry = geometry
        self.rows, self.cols = -(-geometry.out_h // 2), -(-geometry.out_w // 2)
        (top, _), (left, _) = geometry.pads
        self.row_spans = [_span(geometry.height, top, parity, self.rows) for parity in (0, 1)]
        self.col_spans = [_span(geometry.width, left, parity, self.cols) for parity in (0, 1)]
        self.out_rows = [(geometry.out_h - parity + 1) // 2 for parity in (0, 1)]
        self.out_cols = [(geometry.out_w - parity + 1) // 2 for parity in (0, 1)]

    def positions(self, samples):
        """Tiles of ``samples`` samples: the rows of each GEMM."""
        return self.rows * self.cols * samples


def _span(size, pad, parity, tiles):
    """``(first, end, source)``: the tiles t in [0, tiles] whose padded position
    ``2t + parity`` is input index ``2t + parity - pad`` in [0, size); None if none."""
    first = max(0, -((parity - pad) // 2))
    last = min(tiles, (size - 1 + pad - parity) // 2)
    if last < first:
        return None
    return first, last + 1, 2 * first + parity - pad


class Buffers:
    """One thread's scratch arrays for blocks of ``samples`` samples (made on first use)."""

    def __init__(self, tiling, samples, channels, filters, dtype):
        rows, cols = tiling.rows, tiling.cols
        self.samples = samples
        self.shape = (samples, rows, cols)
        self.tiles = tiling.positions(samples)
        self.spread = numpy.zeros((2, samples, 2, rows + 1, cols + 1, channels), dtype)  # E: zero padding
        self.columns = numpy.empty((4, samples, 2, rows + 1, cols, channels), dtype)  # Q = E B, per j
        self.transformed = numpy.empty((16, self.tiles, channels), dtype)  # V = B^T E B
        # M in forward; dM in backward, whose corners are written only inside the output: zeros.
        self.products = numpy.zeros((16, self.tiles, filters), dtype)
        self.dtype, self.channels, self.filters = dtype, channels, filters
        self._extra = {}

    def extra(self, name, shape, dtype=None):
        """A further scratch array ``name`` (zeros when first made)."""
        array = self._extra.get(name)
        if array is None:
            array = self._extra[name] = numpy.zeros(shape, self.dtype if dtype is None else dtype)
        return array


def buffers_for(state, tiling, samples, channels, filters, dtype):
    """The thread's Buffers for blocks of ``samples`` (``state`` is its dict)."""
    buffers = state.get(samples)
    if buffers is None:
        buffers = state[samples] = Buffers(tiling, samples, channels, filters, dtype)
    return buffers


def input_transform(images, tiling, buffers):
    """``V = B^T d B`` of every tile of ``images`` (samples, H, W, C), into ``buffers.transformed``."""
    spread, columns = buffers.spread, buffers.columns
    rows, cols = tiling.rows, tiling.cols
    for row_parity, row_span in enumerate(tiling.row_spans):
        for col_parity, col_span in enumerate(tiling.col_spans):
            if row_span is None or col_span is None:
                continue
            (t0, t1, r0), (u0, u1, c0) = row_span, col_span
            source = images[:, r0 : r0 + 2 * (t1 - t0) - 1 : 2, c0 : c0 + 2 * (u1 - u0) - 1 : 2]
            numpy.copyto(spread[col_parity, :, row_parity, t0:t1, u0:u1], source)
    # Columns (d B): column j' of tile u is (parity j' % 2, tile u + j' // 2).
    even_a, even_b = spread[0, ..., :cols, :], spread[0, ..., 1:, :]
    odd_a, odd_b = spread[1, ..., :cols, :], spread[1, ..., 1:, :]
    out = buffers.transformed.reshape(4, 4, buffers.samples, rows, cols, buffers.channels)
    numpy.subtract(even_a, even_b, out=columns[0])
    numpy.add(odd_a, even_b, out=columns[1])
    numpy.subtract(even_b, odd_a, out=columns[2])
    numpy.subtract(odd_a, odd_b, out=columns[3])
    # Rows (B^T (d B)): the same on the row parity and tile, for all four columns at once.
    even_a, even_b = columns[:, :, 0, :rows], columns[:, :, 0, 1:]
    odd_a, odd_b = columns[:, :, 1, :rows], columns[:, :, 1, 1:]
    numpy.subtract(even_a, even_b, out=out[0])
    numpy.add(odd_a, even_b, out=out[1])
    numpy.subtract(even_b, odd_a, out=out[2])
    numpy.subtract(odd_a, odd_b, out=out[3])
    return buffers.transformed


def output_transform(products, tiling, buffers, out, relu):
    """``Y = A^T M A`` of every tile (``products``: M, (16, tiles, K)) into
    ``out`` (samples, Ho, Wo, K), with ReLU fused into the last pass."""
    tiles, filters = buffers.tiles, buffers.filters
    m = products.reshape(4, 4, tiles, filters)
    rows_done = buffers.extra("rows_done", (2, 4, tiles, filters))
    numpy.add(m[0], m[1], out=rows_done[0])
    rows_done[0] += m[2]
    numpy.subtract(m[1], m[2], out=rows_done[1])
    rows_done[1] -= m[3]
    done = buffers.extra("done", (2, 2, tiles, filters))
    numpy.add(rows_done[:, 0], rows_done[:, 1], out=done[:, 0])
    done[:, 0] += rows_done[:, 2]
    numpy.subtract(rows_done[:, 1], rows_done[:, 2], out=done[:, 1])
    done[:, 1] -= rows_done[:, 3]
    done = done.reshape((2, 2) + buffers.shape + (filters,))
    for a in (0, 1):
        for b in (0, 1):
            count_rows, count_cols = tiling.out_rows[a], tiling.out_cols[b]
            source = done[a, b, :, :count_rows, :count_cols]
            target = out[:, a::2, b::2]
            if relu:
                numpy.maximum(source, 0, out=target)
            else:
                numpy.copyto(target, source)


def output_transform_adjoint(grad, out, tiling, buffers, relu):
    """``A dY A^T`` of every tile of ``grad`` (samples, Ho, Wo, K), masked by
    ReLU (``out > 0``) when ``relu``, into ``buffers.products`` with the
    SIGNS convention (module top)."""
    tiles, filters = buffers.tiles, buffers.filters
    dm = buffers.products
    slots = dm.reshape((4, 4) + buffers.shape + (filters,))
    if relu:
        # Masked in NHWC order first (contiguous passes), then spread: the
        # strided passes are the slow ones, so there is one per element.
        mask = buffers.extra("mask", grad.shape, bool)
        numpy.greater(out, 0, out=mask)
        grad = numpy.multiply(grad, mask, out=buffers.extra("masked", grad.shape))
    for a in (0, 1):
        for b in (0, 1):
            count_rows, count_cols = tiling.out_rows[a], tiling.out_cols[b]
            numpy.copyto(slots[3 * a, 3 * b, :, :count_rows, :count_cols], grad[:, a::2, b::2])
    # Columns (j), then rows (i), each from the two stored corners.
    flat = dm.reshape(4, 4, tiles, filters)
    for i in (0, 3):
        numpy.add(flat[i, 0], flat[i, 3], out=flat[i, 1])
        numpy.subtract(flat[i, 0], flat[i, 3], out=flat[i, 2])
    numpy.add(flat[0], flat[3], out=flat[1])
    numpy.subtract(flat[0], flat[3], out=flat[2])
    return dm


def input_transform_adjoint(grad_transformed, tiling, buffers, grad_images):
    """The input's gradient from that of V (16, tiles, C): the adjoint of
    input_transform, adding the overlapping tiles together, into
    ``grad_images`` (samples, H, W, C)."""
    samples, rows, cols = buffers.shape
    channels = buffers.channels
    dv = grad_transformed.reshape(4, 4, samples, rows, cols, channels)
    grad_columns = buffers.columns  # dQ (4, samples, 2, rows + 1, cols, C)
    # Rows: padded row parity 0 of tile t gets dV0[t] + (dV1 + dV2 - dV0)[t - 1],
    # parity 1 gets (dV1 - dV2 + dV3)[t] - dV3[t - 1].
    carried = buffers.extra("carried", (4, samples, rows, cols, channels))
    grad_spread = buffers.extra("grad_spread", (2, samples, 2, rows + 1, cols + 1, channels))
    carried_columns = buffers.extra("carried_columns", (samples, 2, rows + 1, cols, channels))
    numpy.add(dv[1], dv[2], out=carried)
    carried -= dv[0]
    numpy.subtract(dv[1], dv[2], out=dv[1])
    dv[1] += dv[3]
    _shift_add(grad_columns[:, :, 0], dv[0], carried, 1.0, axis=2)
    _shift_add(grad_columns[:, :, 1], dv[1], dv[3], -1.0, axis=2)
    # Columns: the same along the column tiles, into the spread layout.
    dq = grad_columns
    numpy.add(dq[1], dq[2], out=carried_columns)
    carried_columns -= dq[0]
    numpy.subtract(dq[1], dq[2], out=dq[1])
    dq[1] += dq[3]
    _shift_add(grad_spread[0], dq[0], carried_columns, 1.0, axis=3)
    _shift_add(grad_spread[1], dq[1], dq[3], -1.0, axis=3)
    for row_parity, row_span in enumerate(tiling.row_spans):
        for col_parity, col_span in enumerate(tiling.col_spans):
            if row_span is None or col_span is None:
                continue
            (t0, t1, r0), (u0, u1, c0) = row_span, col_span
            target = grad_images[:, r0 : r0 + 2 * (t1 - t0) - 1 : 2, c0 : c0 + 2 * (u1 - u0) - 1 : 2]
            numpy.copyto(target, grad_spread[col_parity, :, row_parity, t0:t1, u0:u1])


def _shift_add(target, here, previous, sign, axis):
    """``target[k] = here[k] + sign * previous[k - 1]`` along ``axis`` for k in
    [0, n] (n = here's length there; missing terms are zero)."""
    length = here.shape[axis]

    def at(array, index):
        key = [slice(None)] * array.ndim
        key[axis] = index
        return array[tuple(key)]

    numpy.copyto(at(target, 0), at(here, 0))
    combine = numpy.add if sign > 0 else numpy.subtract
    if length > 1:
        combine(at(here, slice(1, length)), at(previous, slice(0, length - 1)), out=at(target, slice(1, length)))
    if sign > 0:
        numpy.copyto(at(target, length), at(previous, length - 1))
    else:
        numpy.negative(at(previous, length - 1), out=at(target, length))


def forward(device, images, kernel, bias, relu, tiling, samples_per_block):
    """The convolution (N, Ho, Wo, K) of ``images`` (N, H, W, C) with ``kernel``
    (3, 3, C, K), plus ``bias`` and ReLU; returns ``(out, transformed kernel)``."""
    geometry = tiling.geometry
    batch, channels, filters = geometry.batch, geometry.channels, kernel.shape[-1]
    dtype = numpy.result_type(images.dtype, kernel.dtype)
    transformed_kernel = kernel_transform(kernel.reshape(3, 3, channels, filters).astype(dtype, copy=False))
    out = numpy.empty((batch, geometry.out_h, geometry.out_w, filters), dtype)
    starts = list(range(0, batch, samples_per_block))

    def work(index, state):
        start = starts[index]
        stop = min(batch, start + samples_per_block)
        buffers = buffers_for(state, tiling, stop - start, channels, filters, dtype)
        with _short_rows():
            transformed = input_transform(images[start:stop], tiling, buffers)
            products = batched_gemm(transformed, transformed_kernel, buffers.products)
            if bias is not None:
                products[5] += bias  # component (1, 1) reaches all four outputs of a tile with weight 1
            output_transform(products, tiling, buffers, out[start:stop], relu)

    device.parallel_blocks(work, len(starts), dict)
    return out, transformed_kernel


def backward(device, grad, images, transformed_kernel, out, relu, wants, tiling, samples_per_block):
    """``(grad_images, grad_kernel, grad_bias)`` of forward's result, each
    None unless ``wants`` (a triple of flags, in that order) asks for it.

    Args:
        grad: the output's gradient (N, Ho, Wo, K).
        images: forward's input (needed for the kernel's gradient).
        transformed_kernel: forward's (16, C, K) (for the input's).
        out: forward's output, the ReLU mask (with ``relu``).
    """
    geometry = tiling.geometry
    batch, channels, filters = geometry.batch, geometry.channels, grad.shape[-1]
    wants_images, wants_kernel, wants_bias = wants
    dtype = grad.dtype
    grad_images = numpy.empty((batch, geometry.height, geometry.width, channels), dtype) if wants_images else None
    # dV = dM @ U^T with the signs of the stored dM folded into U^T.
    signed_kernel = (transformed_kernel.transpose(0, 2, 1) * SIGNS.astype(dtype)[:, None, None]).copy() \
        if wants_images else None
    starts = list(range(0, batch, samples_per_block))

    def work(index, state):
        start = starts[index]
        stop = min(batch, start + samples_per_block)
        buffers = buffers_for(state, tiling, stop - start, channels, filters, dtype)
        with _short_rows():
            dm = output_transform_adjoint(grad[start:stop], None if out is None else out[start:stop], tiling,
                                          buffers, relu)
            bias_part = kernel_part = None
            if wants_bias:
                ones = buffers.extra("ones", (buffers.tiles,))
                ones.fill(1)
                bias_part = ones @ dm[5]
            if wants_kernel:
                transformed = input_transform(images[start:stop], tiling, buffers)
                kernel_part = batched_gemm(transformed.transpose(0, 2, 1), dm)
            if wants_images:
                grad_transformed = batched_gemm(dm, signed_kernel, buffers.transformed)
                input_transform_adjoint(grad_transformed, tiling, buffers, grad_images[start:stop])
        return bias_part, kernel_part

    parts = device.parallel_blocks(work, len(starts), dict)
    grad_bias = grad_kernel = None
    if wants_bias:
        grad_bias = sum_in_order(numpy, [part[0] for part in parts], (filters,), dtype)
    if wants_kernel:
        summed = sum_in_order(numpy, [part[1] for part in parts], (16, channels, filters), dtype)
        grad_kernel = kernel_transform_adjoint(summed * SIGNS[:, None, None], dtype)
    return grad_images, grad_kernel, grad_bias


def batched_gemm(left, right, out=None):
    """The 16 products ``left[i] @ right[i]`` (one BLAS call each, in this thread)."""
    return numpy.matmul(left, right, out=out)


class _short_rows:  # noqa: N801  (a context manager)
    """NumPy's ufunc buffer size set to ``tuning.WINOGRAD_BUFSIZE`` elements
    in this thread while it works on a block: with the default (8192), an
    operation whose operands are contiguous only in runs shorter than about
    half of it is staged through a buffer, which doubled the time of the
    column transforms (runs of tiles * channels floats; benchmarks/NOTES.md,
    "Winograd"). The strided copies in and out of NHWC measured the same
    either way. Setting it costs ~10 us, hence once per block."""

    def __enter__(self):
        self._previous = numpy.setbufsize(tuning.WINOGRAD_BUFSIZE)

    def __exit__(self, *exc):
        numpy.setbufsize(self._previous)
