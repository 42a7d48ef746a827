"""im2col and col2im: a convolution's patch matrix and its adjoint, one kernel each.

Convolutions are a patch matrix times the kernel matrix (one GEMM, cuBLAS
on a GPU; CuPy 14 has no cuDNN). Building that matrix the NumPy way costs
three launches when there is padding (zero a padded buffer, copy the input
into its middle, copy the strided windows out) and allocates the padded
copy; the CUDA kernel reads each patch element straight from the unpadded
input, writing 0 where the window hangs over the border.

Both kernels are copies bound by memory bandwidth, written to its floor:
one thread per vector of channels of one (pixel, tap) (``Pack<V>``: 4
floats, or 2 doubles, per 16-byte access where the channels and the
pointers allow), consecutive threads on consecutive vectors so that a
warp's loads and stores are whole cache lines, and 32-bit index math whose
divisions by the geometry's sizes are multiply-highs (``cuda_common``'s
``Divider``, in a ``PatchGeometry`` passed by value). A launch covers at
most 2^31 - 1 vectors; a larger batch takes one launch per block of
samples. (Before: one thread per scalar with a chain of 64-bit divisions
and remainders, 10x the bandwidth floor on an H100: benchmarks/NOTES.md.)

The references are the CPU's: im2col a blocked strided copy (``padding``
is a per-thread holder ``[buffer or None, samples]`` for the reused padded
buffer, made on first use for ``samples``, the largest block, so that
blocks of samples do not zero a fresh one each time), col2im the kh*kw
clipped scatter-adds. col2im's kernel adds each element's patch entries in
the reference's order, so both give the same bits.
"""
import functools

import numpy

from minikeras.kernels.cuda_common import (DIVIDER, DIVIDER_SOURCE, EXACT_SOURCE, INDEX_LIMIT, PACK_SOURCE, ByValue,
                                           set_divider, vector_width)
from minikeras.kernels.kernel import Kernel, UnsupportedDtype, blocks_for, register

PATCH_GEOMETRY = ByValue("PatchGeometry", [
    ("count", "unsigned int", 1),  # vectors this launch covers (of the patches, or of the image for col2im)
    ("vector", "int", 1),  # V: scalars per vector access
    *((name, "int", 1) for name in ("height", "width", "out_h", "out_w", "window_h", "window_w", "stride_h",
                                     "stride_w", "dilation_h", "dilation_w", "pad_top", "pad_left")),
    *((name, DIVIDER.name, 1) for name in ("by_vectors", "by_window_w", "by_window_h", "by_out_w", "by_out_h",
                                           "by_width", "by_height", "by_stride_h", "by_stride_w")),
])

COMMON_SOURCE = DIVIDER.declaration + PATCH_GEOMETRY.declaration + DIVIDER_SOURCE + PACK_SOURCE + EXACT_SOURCE + r"""
__device__ __forceinline__ unsigned int split(unsigned int& rest, Divider by) {
    /* rest -> rest / by.divisor; returns the remainder. */
    const unsigned int quotient = divide(rest, by);
    const unsigned int remainder = rest - quotient * by.divisor;
    rest = quotient;
    return remainder;
}
"""

IM2COL_SOURCE = COMMON_SOURCE + r"""
template <int V>
__device__ __forceinline__ void im2col_packs(const scalar_t* __restrict__ x, scalar_t* __restrict__ cols,
                                             const PatchGeometry& g) {
    /* cols is (samples, out_h, out_w, window_h, window_w, channels / V) vectors, C-contiguous: thread i writes
       vector i, read from x (samples, height, width, channels / V) or 0 over the padding. */
    typedef Pack<V> P;
    const unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= g.count) return;
    unsigned int rest = i;
    const unsigned int c = split(rest, g.by_vectors);
    const int dj = (int)split(rest, g.by_window_w);
    const int di = (int)split(rest, g.by_window_h);
    const int ow = (int)split(rest, g.by_out_w);
    const int oh = (int)split(rest, g.by_out_h);
    const unsigned int n = rest;
    const int h = oh * g.stride_h - g.pad_top + di * g.dilation_h;
    const int w = ow * g.stride_w - g.pad_left + dj * g.dilation_w;
    P value;
    if ((unsigned int)h < (unsigned int)g.height && (unsigned int)w < (unsigned int)g.width) {
        value = reinterpret_cast<const P*>(x)[((n * g.height + h) * g.width + w) * g.by_vectors.divisor + c];
    } else {
#pragma unroll
        for (int k = 0; k < V; ++k) value.v[k] = (scalar_t)0;
    }
    reinterpret_cast<P*>(cols)[i] = value;
}

extern "C" __global__ void __launch_bounds__(256) im2col(const scalar_t* __restrict__ x, scalar_t* __restrict__ cols,
                                                         PatchGeometry g) {
    if (g.vector == 4 && sizeof(scalar_t) == 4) {
        im2col_packs<4>(x, cols, g);
    } else if (g.vector == 2) {
        im2col_packs<2>(x, cols, g);
    } else {
        im2col_packs<1>(x, cols, g);
    }
}
"""


def im2col_reference(device, source, geometry, block, patch_major, padding):
    """Copy the windows of ``source`` (n, H, W, C; unpadded) into ``block``:
    (n, Ho, Wo, kh, kw, C), or (kh, kw, C, n, Ho, Wo) when ``patch_major``."""
    xp = device.xp
    if geometry.has_padding and padding[0] is None:
        # Sized for the largest block this holder will see (its second entry), not for this one.
        padding[0] = geometry.pad_buffer(xp, padding[1] if len(padding) > 1 else source.shape[0], source.dtype)
    windows = geometry.windows(xp, geometry.padded_block(source, 0, source.shape[0], padding[0]))
    xp.copyto(block, windows.transpose(3, 4, 5, 0, 1, 2) if patch_major else windows)
    return block


def _im2col_launch(launcher, device, source, geometry, block, patch_major, padding):
    if patch_major:  # a CPU layout; never chosen on a GPU
        return im2col_reference(device, source, geometry, block, patch_major, padding)
    source = device.xp.ascontiguousarray(source)
    _launch_by_samples(launcher, source, block, geometry)
    return block


@functools.lru_cache(maxsize=256)
def _geometry_value(sizes, vector, count):
    """A PatchGeometry (a size-1 NumPy array, shared: never written after this) for ``sizes``:
    ``(height, width, channels, out_h, out_w, window_h, window_w, stride_h, stride_w, dilation_h,
    dilation_w, pad_top, pad_left)``."""
    (height, width, channels, out_h, out_w, window_h, window_w, stride_h, stride_w, dilation_h, dilation_w,
     pad_top, pad_left) = sizes
    value = PATCH_GEOMETRY.new()
    value["count"], value["vector"] = count, vector
    for name, size in zip(("height", "width", "out_h", "out_w", "window_h", "window_w", "stride_h", "stride_w",
                           "dilation_h", "dilation_w", "pad_top", "pad_left"), (height, width, *sizes[3:])):
        value[name] = size
    for name, divisor in (("by_vectors", channels // vector), ("by_window_w", window_w), ("by_window_h", window_h),
                          ("by_out_w", out_w), ("by_out_h", out_h), ("by_width", width), ("by_height", height),
                          ("by_stride_h", stride_h), ("by_stride_w", stride_w)):
        set_divider(value[name], divisor)
    numpy.ndarray.setflags(value, write=False)  # shared between calls: never written again
    return value


def _launch_by_samples(launcher, source, target, geometry):
    """Launch im2col (an image in, its patches out) or col2im (patches in, an image out) over
    blocks of samples, each launch's vectors (in and out) under 2^31.

    Raises:
        UnsupportedDtype: a dtype without a CUDA source, a strided output, or a single sample
            too large for 32-bit index math (the reference then runs).
    """
    launcher.check(source.dtype, target.dtype)
    if not target.flags.c_contiguous:
        raise UnsupportedDtype("im2col/col2im write a C-contiguous target; received a strided one.")
    samples = target.shape[0]
    if samples == 0 or target.size == 0:
        return
    (pad_top, _), (pad_left, _) = geometry.pads
    sizes = (geometry.height, geometry.width, geometry.channels, geometry.out_h, geometry.out_w, *geometry.window,
             *geometry.strides, *geometry.dilation, pad_top, pad_left)
    vector = vector_width(geometry.channels, target.itemsize, source.data.ptr, target.data.ptr)
    per_sample = max(source.size, target.size) // samples // vector
    if per_sample > INDEX_LIMIT or max(geometry.padded) > INDEX_LIMIT:
        raise UnsupportedDtype(f"one sample of {per_sample} vectors is past a launch's 32-bit index range.")
    step = max(1, INDEX_LIMIT // per_sample)
    out_per_sample = target.size // samples // vector
    for start in range(0, samples, step):
        stop = min(samples, start + step)
        count = (stop - start) * out_per_sample
        grid, threads = blocks_for(count)
        launcher.run(target.dtype, grid, threads, (source[start:stop], target[start:stop],
                                                   _geometry_value(sizes, vector, count)))


register(Kernel("im2col", im2col_reference, IM2COL_SOURCE, _im2col_launch))

# ------------------------------------------------------------------ col2im
COL2IM_SOURCE = COMMON_SOURCE + r"""
template <int V>
__device__ __forceinline__ void col2im_packs(const scalar_t* __restrict__ cols, scalar_t* __restrict__ x,
                                             const PatchGeometry& g) {
    /* Thread i writes vector i of x (samples, height, width, channels / V): the sum of the patch entries that
       came from it, added in window order (the reference's order of adds). */
    typedef Pack<V> P;
    const unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= g.count) return;
    unsigned int rest = i;
    const unsigned int c = split(rest, g.by_vectors);
    const int w = (int)split(rest, g.by_width);
    const int h = (int)split(rest, g.by_height);
    const unsigned int n = rest;
    P total;
#pragma unroll
    for (int k = 0; k < V; ++k) total.v[k] = (scalar_t)0;
    for (int di = 0; di < g.window_h; ++di) {
        const int row = h + g.pad_top - di * g.dilation_h;
        if (row < 0) break;  /* and every later di */
        const unsigned int oh = divide((unsigned int)row, g.by_stride_h);
        if (oh * g.stride_h != (unsigned int)row || oh >= (unsigned int)g.out_h) continue;
        for (int dj = 0; dj < g.window_w; ++dj) {
            const int column = w + g.pad_left - dj * g.dilation_w;
            if (column < 0) break;
            const unsigned int ow = divide((unsigned int)column, g.by_stride_w);
            if (ow * g.stride_w != (unsigned int)column || ow >= (unsigned int)g.out_w) continue;
            const P value = reinterpret_cast<const P*>(cols)[
                ((((n * g.out_h + oh) * g.out_w + ow) * g.window_h + di) * g.window_w + dj) * g.by_vectors.divisor + c];
#pragma unroll
            for (int k = 0; k < V; ++k) total.v[k] = add_rn(total.v[k], value.v[k]);
        }
    }
    reinterpret_cast<P*>(x)[i] = total;
}

extern "C" __global__ void __launch_bounds__(256) col2im(const scalar_t* __restrict__ cols, scalar_t* __restrict__ x,
                                                         PatchGeometry g) {
    if (g.vector == 4 && sizeof(scalar_t) == 4) {
        col2im_packs<4>(cols, x, g);
    } else if (g.vector == 2) {
        col2im_packs<2>(cols, x, g);
    } else {
        col2im_packs<1>(cols, x, g);
    }
}
"""


def col2im_reference(device, patches, geometry, target):
    """Sum ``patches`` (n, Ho, Wo, kh, kw, C) back into ``target``
    (n, H, W, C) where each entry came from (overwriting ``target``)."""
    target.fill(0)
    geometry.scatter_add(target, patches)
    return target


def _col2im_launch(launcher, device, patches, geometry, target):
    patches = device.xp.ascontiguousarray(patches)
    _launch_by_samples(launcher, patches, target, geometry)
    return target


register(Kernel("col2im", col2im_reference, COL2IM_SOURCE, _col2im_launch))
