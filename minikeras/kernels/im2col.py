"""im2col: a convolution's patch matrix, built in one kernel.

Convolutions are a patch matrix times the kernel matrix (one GEMM, cuBLAS
on a GPU; CuPy 14 has no cuDNN). Building that matrix the NumPy way costs
three launches when there is padding (zero a padded buffer, copy the input
into its middle, copy the strided windows out) and allocates the padded
copy; the CUDA kernel reads each patch element straight from the unpadded
input, writing 0 where the window hangs over the border.

The reference is the CPU's blocked copy: ``padding`` is a per-thread
holder ``[buffer or None, samples]`` for the reused padded buffer, made on
first use for ``samples`` (the largest block), so that blocks of samples
do not zero a fresh one each time.
"""
import numpy

from minikeras.kernels.kernel import Kernel, blocks_for, register

IM2COL_SOURCE = r"""
extern "C" __global__ void im2col(const scalar_t* x, scalar_t* cols, long long samples, long long height,
                                  long long width, long long channels, long long out_h, long long out_w,
                                  int window_h, int window_w, int stride_h, int stride_w, int dilation_h,
                                  int dilation_w, int pad_top, int pad_left) {
    const long long count = samples * out_h * out_w * window_h * window_w * channels;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < count;
         i += (long long)blockDim.x * gridDim.x) {
        /* cols is (samples, out_h, out_w, window_h, window_w, channels), C-contiguous. */
        const long long c = i % channels;
        long long rest = i / channels;
        const long long dj = rest % window_w;
        rest /= window_w;
        const long long di = rest % window_h;
        rest /= window_h;
        const long long ow = rest % out_w;
        rest /= out_w;
        const long long oh = rest % out_h;
        const long long n = rest / out_h;
        const long long h = oh * stride_h - pad_top + di * dilation_h;
        const long long w = ow * stride_w - pad_left + dj * dilation_w;
        cols[i] = (h >= 0 && h < height && w >= 0 && w < width) ? x[((n * height + h) * width + w) * channels + c]
                                                                 : (scalar_t)0;
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
    grid, threads = blocks_for(block.size)
    launcher.run(source.dtype, grid, threads, (source, block) + _window_arguments(geometry, source.shape[0]))
    return block


def _window_arguments(geometry, samples):
    """The geometry arguments im2col and col2im share, in their signatures' order."""
    (pad_top, _), (pad_left, _) = geometry.pads
    return tuple(numpy.int64(value) for value in (samples, geometry.height, geometry.width, geometry.channels,
                                                  geometry.out_h, geometry.out_w)) + tuple(
        numpy.int32(value) for value in (*geometry.window, *geometry.strides, *geometry.dilation, pad_top, pad_left))


register(Kernel("im2col", im2col_reference, IM2COL_SOURCE, _im2col_launch))

# ------------------------------------------------------------------ col2im
COL2IM_SOURCE = r"""
extern "C" __global__ void col2im(const scalar_t* cols, scalar_t* x, long long samples, long long height,
                                  long long width, long long channels, long long out_h, long long out_w,
                                  int window_h, int window_w, int stride_h, int stride_w, int dilation_h,
                                  int dilation_w, int pad_top, int pad_left) {
    const long long count = samples * height * width * channels;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < count;
         i += (long long)blockDim.x * gridDim.x) {
        /* One thread per element of x (samples, height, width, channels): it gathers the patch
           entries that came from it, in window order (the reference's order of adds). */
        const long long c = i % channels;
        long long rest = i / channels;
        const long long w = rest % width;
        rest /= width;
        const long long h = rest % height;
        const long long n = rest / height;
        scalar_t total = 0;
        for (int di = 0; di < window_h; ++di) {
            const long long row = h + pad_top - di * dilation_h;
            if (row < 0 || row % stride_h != 0 || row / stride_h >= out_h) continue;
            for (int dj = 0; dj < window_w; ++dj) {
                const long long column = w + pad_left - dj * dilation_w;
                if (column < 0 || column % stride_w != 0 || column / stride_w >= out_w) continue;
                total += cols[((((n * out_h + row / stride_h) * out_w + column / stride_w) * window_h + di)
                               * window_w + dj) * channels + c];
            }
        }
        x[i] = total;
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
    grid, threads = blocks_for(target.size)
    launcher.run(patches.dtype, grid, threads, (patches, target) + _window_arguments(geometry, target.shape[0]))
    return target


register(Kernel("col2im", col2im_reference, COL2IM_SOURCE, _col2im_launch))
