"""Which algorithm computes a CPU convolution: im2col + GEMM or Winograd F(2x2, 3x3).

Both are exact up to rounding (ops/nn/winograd.py); the choice is only
about speed. It is made per layer, by comparing two cost estimates in
nanoseconds per output pixel built from per-flop and per-element costs
measured on the development machine (``backend/tuning.py``; the
measurements and how well the model ranks them are in benchmarks/NOTES.md,
"Winograd"):

- im2col: its GEMMs (``18 C K`` flops per pixel and product at
  ``GEMM_NS_PER_FLOP``), the patch copies (``9 C`` elements per product at
  ``COPY_NS``), the bias/ReLU passes, and for the input's gradient the
  cheaper of col2im's two methods (sliding_window).
- Winograd: its GEMMs (``8 C K`` flops per pixel and product, times the
  tiles' rounding up of an odd output, at ``WINOGRAD_GEMM_NS_PER_FLOP``)
  and its transforms (element passes counted in winograd.py, at
  ``WINOGRAD_TRANSFORM_NS``).

With few input channels the transforms cost more than the multiplies they
save (a first layer on RGB or grayscale images stays im2col); from about 8
channels Winograd wins. Inference (no gradient needed) compares the
forward passes alone. ``MINIKERAS_CONV_ALGORITHM`` (``im2col`` or
``winograd``) forces one wherever it applies.
"""
from minikeras.backend import tuning
from minikeras.ops.nn import winograd


def choose(device, geometry, filters, dtype, training=True, input_gradient=True):
    """``"winograd"`` or ``"im2col"`` for this convolution on ``device``.

    Args:
        geometry: the convolution's WindowGeometry.
        filters: output channels.
        dtype: the computation's dtype.
        training: whether backward will run (else only forward is costed).
        input_gradient: whether backward computes the input's gradient.
    """
    if not winograd.applies(device, geometry, dtype):
        return "im2col"
    if tuning.CONV_ALGORITHM != "auto":
        return tuning.CONV_ALGORITHM
    im2col = im2col_cost(geometry, filters, training, input_gradient)
    return "winograd" if winograd_cost(geometry, filters, training, input_gradient) < im2col else "im2col"


def im2col_cost(geometry, filters, training=True, input_gradient=True):
    """Estimated nanoseconds per output pixel of the im2col convolution."""
    channels = geometry.channels
    gemm = tuning.GEMM_NS_PER_FLOP * 18 * channels * filters
    patches = tuning.COPY_NS * 9 * channels
    cost = gemm + patches + tuning.COPY_NS * 2 * filters  # forward, bias and ReLU
    if training:
        cost += gemm + patches + tuning.COPY_NS * 3 * filters  # kernel gradient, mask and bias sum
        if input_gradient:
            full_correlation = tuning.COPY_NS * 9 * filters
            scatter = tuning.ADD_NS * 9 * channels
            cost += gemm + min(full_correlation, scatter)
    return cost


def winograd_cost(geometry, filters, training=True, input_gradient=True):
    """Estimated nanoseconds per output pixel of the Winograd convolution."""
    channels = geometry.channels
    rows, cols = -(-geometry.out_h // 2), -(-geometry.out_w // 2)
    rounding = 4 * rows * cols / (geometry.out_h * geometry.out_w)  # an odd output is computed to even
    gemm = tuning.WINOGRAD_GEMM_NS_PER_FLOP * 8 * channels * filters
    # Element passes per pixel (winograd.py): the input transform 7 C, the
    # output transform 7 K; backward's output-gradient transform and mask
    # about 3.25 K, the input transform again for the kernel's gradient,
    # and the input transform's adjoint 10 C.
    passes = 7 * channels + 7 * filters
    cost = gemm
    if training:
        passes += 7 * channels + 3.25 * filters
        cost += gemm
        if input_gradient:
            passes += 10 * channels
            cost += gemm
    return rounding * (cost + tuning.WINOGRAD_TRANSFORM_NS * passes)


def winograd_samples_per_block(geometry, filters):
    """Samples per block of the Winograd passes: their scratch arrays (about
    7 (C + K) floats per padded input pixel) near ``tuning.WINOGRAD_BLOCK_BYTES``,
    but at least ``tuning.WINOGRAD_MIN_ROWS`` tiles (rows of each GEMM: a
    GEMM of a few dozen rows runs at half speed)."""
    per_sample = 7 * (geometry.channels + filters) * (geometry.out_h + 2) * (geometry.out_w + 2) * 4
    tiles = -(-geometry.out_h // 2) * -(-geometry.out_w // 2)
    samples = max(tuning.WINOGRAD_BLOCK_BYTES // per_sample, -(-tuning.WINOGRAD_MIN_ROWS // tiles))
    return max(1, min(geometry.batch, samples))
