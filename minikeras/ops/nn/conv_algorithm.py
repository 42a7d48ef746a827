"""Which algorithm computes a CPU convolution: im2col + GEMM or Winograd F(2x2, 3x3).

Both are exact up to rounding (ops/nn/winograd.py); the choice is only
about speed, made per layer by a cost model whose per-element and
per-flop costs were measured on the development machine
(``backend/tuning.py``; the measurements are in benchmarks/NOTES.md,
"Winograd"). ``MINIKERAS_CONV_ALGORITHM`` (``im2col`` or ``winograd``)
forces one wherever it applies.
"""
from minikeras.backend import tuning
from minikeras.ops.nn import winograd


def choose(device, geometry, filters, dtype, needs_input_grad=True):
    """``"winograd"`` or ``"im2col"`` for this convolution on ``device``."""
    if not winograd.applies(device, geometry, dtype):
        return "im2col"
    if tuning.CONV_ALGORITHM != "auto":
        return tuning.CONV_ALGORITHM
    return "winograd" if geometry.channels >= 16 else "im2col"


def winograd_samples_per_block(geometry, filters):
    """Samples per block of the Winograd passes: their scratch arrays (about
    7 (C + K) floats per padded input pixel) near ``tuning.WINOGRAD_BLOCK_BYTES``."""
    per_sample = 7 * (geometry.channels + filters) * (geometry.out_h + 2) * (geometry.out_w + 2) * 4
    return max(1, min(geometry.batch, tuning.WINOGRAD_BLOCK_BYTES // per_sample))
