"""Which algorithms compute a CPU convolution: im2col + GEMM or Winograd F(2x2, 3x3),
chosen separately for the forward pass, the input's gradient and the kernel's.

All of them are exact up to rounding (ops/nn/winograd.py); the choice is
only about speed, and it is made per layer and per direction by comparing
cost estimates in nanoseconds per output pixel, built from per-flop and
per-element costs measured on the development machine
(``backend/tuning.py``; the measurements and how well the model ranks them
are in benchmarks/NOTES.md, "Winograd" and "per direction"):

- im2col: its GEMMs (``18 C K`` flops per pixel and product at
  ``GEMM_NS_PER_FLOP``), the patch copies (``9 C`` elements per product at
  ``COPY_NS``), the bias/ReLU passes, and for the input's gradient the
  cheaper of col2im's two methods (sliding_window).
- Winograd: its GEMMs (``8 C K`` flops per pixel and product, times the
  tiles' rounding up of an odd output, at ``WINOGRAD_GEMM_NS_PER_FLOP``),
  its transforms (element passes counted in winograd.py, at
  ``WINOGRAD_TRANSFORM_NS``) and, in the forward pass, its copies between
  the NHWC activations and its de-interleaved layout (``WINOGRAD_NHWC_NS``
  per element, the excess over im2col's own reads and writes: inside a
  training step these read and write activations that are not in cache,
  in runs of C or K floats where im2col reads runs of 3 C and writes
  contiguously, which is what made Winograd's forward pass slower than
  im2col's on the Fashion-MNIST CNN's 64-filter layer).

The two gradients share work: the ReLU mask and bias sum of the output's
gradient, and with Winograd its transform ``A dY A^T``; so the backward
pair is chosen together, among the four combinations.

With few input channels the transforms cost more than the multiplies they
save, and below ``WINOGRAD_MIN_CHANNELS`` (8) the NHWC copies move runs of
a few floats, which the per-element costs do not model: a first layer on
RGB or grayscale images stays im2col in every direction. Inference
(no gradient needed) chooses the forward pass alone.
``MINIKERAS_CONV_ALGORITHM`` forces one algorithm (``im2col`` or
``winograd``) or one per direction (``forward,input,kernel``, e.g.
``im2col,winograd,winograd``) wherever Winograd applies.
"""
import collections
import itertools

from minikeras.backend import tuning
from minikeras.ops.nn import winograd

IM2COL, WINOGRAD = "im2col", "winograd"

Algorithms = collections.namedtuple("Algorithms", ["forward", "input_gradient", "kernel_gradient"])
Algorithms.__doc__ = """The algorithm (``"im2col"`` or ``"winograd"``) of each direction of one convolution."""

ALL_IM2COL = Algorithms(IM2COL, IM2COL, IM2COL)


def choose(device, geometry, filters, dtype, training=True, input_gradient=True):
    """The :class:`Algorithms` for this convolution on ``device``.

    Args:
        geometry: the convolution's WindowGeometry.
        filters: output channels.
        dtype: the computation's dtype.
        training: whether backward will run (else only forward is costed).
        input_gradient: whether backward computes the input's gradient.
    """
    if not winograd.applies(device, geometry, dtype):
        return ALL_IM2COL
    if tuning.CONV_ALGORITHM != "auto":
        return forced(tuning.CONV_ALGORITHM)
    if geometry.channels < tuning.WINOGRAD_MIN_CHANNELS:
        return ALL_IM2COL
    forward = min((IM2COL, WINOGRAD), key=lambda algorithm: forward_cost(algorithm, geometry, filters))
    if not training:
        return Algorithms(forward, IM2COL, IM2COL)
    pairs = itertools.product((IM2COL, WINOGRAD), repeat=2)
    best = min(pairs, key=lambda pair: backward_cost(*pair, geometry, filters, input_gradient))
    return Algorithms(forward, *best)


def forced(setting):
    """The Algorithms that ``tuning.CONV_ALGORITHM`` (not ``auto``) forces:
    one algorithm for every direction, or ``forward,input,kernel``."""
    names = setting.split(",")
    return Algorithms(*(names * 3 if len(names) == 1 else names))


def _rounding(geometry):
    """Winograd's work per output pixel over im2col's: an odd output is computed to even."""
    rows, cols = -(-geometry.out_h // 2), -(-geometry.out_w // 2)
    return 4 * rows * cols / (geometry.out_h * geometry.out_w)


def forward_cost(algorithm, geometry, filters):
    """Estimated nanoseconds per output pixel of the forward pass (bias and ReLU included)."""
    channels = geometry.channels
    if algorithm == IM2COL:
        return (tuning.GEMM_NS_PER_FLOP * 18 * channels * filters + tuning.COPY_NS * 9 * channels
                + tuning.COPY_NS * 2 * filters)
    # The input's transform 7 C passes (its copy in from NHWC among them), the
    # output's 7 K (its interleaving copy out among them).
    gemm = tuning.WINOGRAD_GEMM_NS_PER_FLOP * 8 * channels * filters
    passes = tuning.WINOGRAD_TRANSFORM_NS * 6 * (channels + filters)
    nhwc = tuning.WINOGRAD_NHWC_NS * (channels + filters)
    return _rounding(geometry) * (gemm + passes + nhwc)


def backward_cost(input_algorithm, kernel_algorithm, geometry, filters, input_gradient=True):
    """Estimated nanoseconds per output pixel of backward (the ReLU mask and
    bias sum included) with these algorithms for the input's and the kernel's
    gradients. Winograd's NHWC copies are costed as its other passes here:
    with per-direction measurements (NOTES) backward's did not show the
    forward pass's extra cost."""
    channels = geometry.channels
    rounding = _rounding(geometry)
    gemm = tuning.GEMM_NS_PER_FLOP * 18 * channels * filters
    winograd_gemm = tuning.WINOGRAD_GEMM_NS_PER_FLOP * 8 * channels * filters
    transform = tuning.WINOGRAD_TRANSFORM_NS
    algorithms = {kernel_algorithm} | ({input_algorithm} if input_gradient else set())
    cost = 0.0
    if algorithms != {WINOGRAD}:
        cost += tuning.COPY_NS * 3 * filters  # the mask and bias sum over the NHWC gradient
    if WINOGRAD in algorithms:
        # A dY A^T (the mask inside it when Winograd does both gradients): 3.25 K passes.
        cost += rounding * transform * 3.25 * filters
    if kernel_algorithm == IM2COL:
        cost += gemm + tuning.COPY_NS * 9 * channels
    else:  # the input's transform again (7 C passes), then 16 GEMMs
        cost += rounding * (winograd_gemm + transform * 7 * channels)
    if input_gradient:
        if input_algorithm == IM2COL:
            full_correlation = tuning.COPY_NS * 9 * filters
            scatter = tuning.ADD_NS * 9 * channels
            cost += gemm + min(full_correlation, scatter)
        else:  # 16 GEMMs, then the input transform's adjoint (10 C passes)
            cost += rounding * (winograd_gemm + transform * 10 * channels)
    return cost


def winograd_samples_per_block(geometry, filters):
    """Samples per block of the Winograd passes: their scratch arrays (about
    7 (C + K) floats per padded input pixel) near ``tuning.WINOGRAD_BLOCK_BYTES``,
    but at least ``tuning.WINOGRAD_MIN_ROWS`` tiles (rows of each GEMM: a
    GEMM of a few dozen rows runs at half speed)."""
    per_sample = 7 * (geometry.channels + filters) * (geometry.out_h + 2) * (geometry.out_w + 2) * 4
    tiles = -(-geometry.out_h // 2) * -(-geometry.out_w // 2)
    samples = max(tuning.WINOGRAD_BLOCK_BYTES // per_sample, -(-tuning.WINOGRAD_MIN_ROWS // tiles))
    return max(1, min(geometry.batch, samples))
