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

The transforms are NumPy passes (planned once per scratch block in
winograd_passes.py), so what decides the speed is how those passes walk
memory. Each block of samples is first copied into a
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
import threading

import numpy

from minikeras.backend import tuning
from minikeras.backend.blocks import sum_in_order
from minikeras.backend.dtypes import dtype_name
from minikeras.ops.nn import winograd_passes

# The kernel transform of F(2x2, 3x3) (Lavin & Gray 2016); B^T and A^T are
# written out as slab additions in winograd_passes.py.
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
            and tuple(geometry.dilation) == (1, 1) and dtype_name(numpy.dtype(dtype)) in ("float32", "float64")
            and geometry.batch > 0 and geometry.out_h > 0 and geometry.out_w > 0)


def kernel_transform(kernel):
    """``G g G^T`` of a (3, 3, C, K) kernel, as (16, C, K) in its dtype (computed in float64)."""
    transformed = numpy.einsum("ai,ijck,bj->abck", _G, kernel.astype(numpy.float64), _G)
    return transformed.reshape((16,) + kernel.shape[2:]).astype(kernel.dtype)


def kernel_transform_adjoint(grad_transformed, dtype):
    """``G^T dU G``: the kernel's gradient (3, 3, C, K) from that of its transform (16, C, K)."""
    grad = grad_transformed.astype(numpy.float64).reshape((4, 4) + grad_transformed.shape[1:])
    return numpy.einsum("ai,abck,bj->ijck", _G, grad, _G).astype(dtype)


Tiling = winograd_passes.Tiling


_blocks = threading.local()  # per thread: {key: Block}, kept across calls and steps


def block_for(tiling, samples, channels, filters, dtype, direction):
    """This thread's Block for blocks of ``samples`` samples of this
    convolution, made on first use and kept: a training step runs the same
    shapes every batch, so the scratch arrays and their plans are reused
    (at most ``tuning.WINOGRAD_CACHED_BLOCKS`` per thread). Forward and
    backward (``direction``) keep separate Blocks: backward relies on the
    parts of dM outside the output staying zero, which forward's GEMM
    overwrites."""
    cache = getattr(_blocks, "by_key", None)
    if cache is None:
        cache = _blocks.by_key = {}
    key = (tiling.key, samples, channels, filters, dtype_name(numpy.dtype(dtype)), direction)
    block = cache.get(key)
    if block is None:
        if len(cache) >= tuning.WINOGRAD_CACHED_BLOCKS:
            cache.clear()
        block = cache[key] = winograd_passes.Block(tiling, samples, channels, filters, dtype)
    return block


def input_transform(images, block):
    """``V = B^T d B`` of every tile of ``images`` (samples, H, W, C), into ``block.transformed``."""
    for _, _, rows, cols, target in block.spread_parts:
        numpy.copyto(target, images[:, rows, cols])
    winograd_passes.run(block.input_passes)
    return block.transformed


def output_transform(block, out, relu):
    """``Y = A^T M A`` of every tile (M in ``block.products``) into ``out``
    (samples, Ho, Wo, K), with ReLU fused into the interleaving pass."""
    passes, parts = block.forward_plan()
    winograd_passes.run(passes)
    for a, b, source in parts:
        if relu:
            numpy.maximum(source, 0, out=out[:, a::2, b::2])
        else:
            numpy.copyto(out[:, a::2, b::2], source)


def output_transform_adjoint(grad, out, block, relu):
    """``A dY A^T`` of every tile of ``grad`` (samples, Ho, Wo, K), masked by
    ReLU (``out > 0``) when ``relu``, into ``block.products`` with the
    SIGNS convention (module top)."""
    plan = block.backward_plan()
    if relu:
        # Masked in NHWC order first (contiguous passes), then spread: the
        # strided passes are the slow ones, so there is one per element.
        if "mask" not in plan:
            plan["mask"], plan["masked"] = numpy.empty(grad.shape, bool), numpy.empty(grad.shape, grad.dtype)
        numpy.greater(out, 0, out=plan["mask"])
        grad = numpy.multiply(grad, plan["mask"], out=plan["masked"])
    for a, b, target in plan["corners"]:
        numpy.copyto(target, grad[:, a::2, b::2])
    winograd_passes.run(plan["gradient"])
    return block.products


def input_transform_adjoint(block, grad_images):
    """The input's gradient from that of V (in ``block.transformed``): the
    adjoint of input_transform, adding the overlapping tiles together, into
    ``grad_images`` (samples, H, W, C)."""
    plan = block.backward_plan()
    winograd_passes.run(plan["adjoint"])
    for (_, _, rows, cols, _), source in zip(block.spread_parts, plan["grad_parts"]):
        numpy.copyto(grad_images[:, rows, cols], source)


def forward(device, images, kernel, bias, relu, tiling, samples_per_block):
    """The convolution (N, Ho, Wo, K) of ``images`` (N, H, W, C) with ``kernel``
    (3, 3, C, K), plus ``bias`` and ReLU; returns ``(out, transformed kernel)``."""
    geometry = tiling.geometry
    batch, channels, filters = geometry.batch, geometry.channels, kernel.shape[-1]
    dtype = numpy.result_type(images.dtype, kernel.dtype)
    transformed_kernel = kernel_transform(kernel.reshape(3, 3, channels, filters).astype(dtype, copy=False))
    out = numpy.empty((batch, geometry.out_h, geometry.out_w, filters), dtype)
    starts = list(range(0, batch, samples_per_block))

    def work(index):
        start = starts[index]
        stop = min(batch, start + samples_per_block)
        block = block_for(tiling, stop - start, channels, filters, dtype, "forward")
        with _short_rows():
            transformed = input_transform(images[start:stop], block)
            products = batched_gemm(transformed, transformed_kernel, block.products)
            if bias is not None:
                products[5] += bias  # component (1, 1) reaches all four outputs of a tile with weight 1
            output_transform(block, out[start:stop], relu)

    device.parallel_blocks(lambda index, _: work(index), len(starts))
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

    def work(index):
        start = starts[index]
        stop = min(batch, start + samples_per_block)
        block = block_for(tiling, stop - start, channels, filters, dtype, "backward")
        with _short_rows():
            dm = output_transform_adjoint(grad[start:stop], None if out is None else out[start:stop], block, relu)
            bias_part = kernel_part = None
            if wants_bias:  # dM[1, 1] is each tile's sum: its column sums are the bias gradient
                plan = block.backward_plan()
                bias_part = plan["ones"] @ plan["bias_component"]
            if wants_kernel:
                transformed = input_transform(images[start:stop], block)
                kernel_part = batched_gemm(transformed.transpose(0, 2, 1), dm)
            if wants_images:
                batched_gemm(dm, signed_kernel, block.transformed)
                input_transform_adjoint(block, grad_images[start:stop])
        return bias_part, kernel_part

    parts = device.parallel_blocks(lambda index, _: work(index), len(starts))
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
