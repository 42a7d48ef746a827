"""Measured tuning constants of the CPU kernels, in one place.

Each constant was chosen by measuring on the 2-core development machine
(the numbers behind them are in benchmarks/NOTES.md, "CPU tuning
constants"); none changes a result, only how the work is split. Each can be
overridden with the environment variable ``MINIKERAS_<NAME>`` (read once,
at import), e.g. ``MINIKERAS_PARALLEL_MATMUL_MIN=0`` to split every 2-D
product over the op threads.

Attributes:
    NUM_THREADS: op threads per op (``MINIKERAS_NUM_THREADS``; None: the
        cores this process may run on; 1 turns the threads off).
    BLAS_THREADS: the BLAS thread count to set (``MINIKERAS_BLAS_THREADS``;
        None: 1 while the op threads are on, unless OPENBLAS_NUM_THREADS or
        OMP_NUM_THREADS is set).
    PARALLEL_MATMUL_MIN: multiply-adds below which a 2-D product runs in
        one thread (handing work to a thread costs about 0.1 ms).
    PARALLEL_PRODUCTS_MIN: multiply-adds of all the products of one
        ``Device.matmul_all`` call below which they run one after another in
        the calling thread: two products of that much work take ~0.2 ms, so
        running them at once saves less than the hand-off to a pool thread
        costs (and under load, waking the thread cost more than the step).
    BLOCK_ELEMENTS: elements per block of ``Device.row_blocks``: a block's
        few ufunc calls cost much more than their dispatch, and the block
        (1 MB of float32) stays in cache between the passes over it.
    ELEMENTWISE_PARALLEL_MIN: elements from which ``Device.elementwise_blocks``
        splits an update (the optimizers' dozen passes) over the op threads.
    ELEMENTWISE_BLOCKS_PER_THREAD: flat blocks per op thread there, so a
        thread that wakes late just takes fewer.
    CHUNK_BYTES: bytes of im2col patch matrix per block: small enough to
        stay in the last-level cache next to the product's output.
    KEEP_PATCHES_MAX_BYTES: the largest patch matrix a few-channel
        convolution keeps for backward instead of rebuilding it.
    KEEP_PATCHES_MAX_BYTES_GPU: the same on a GPU, for any convolution: a
        rebuild there costs an im2col launch and a pass over memory, while
        the GPU's memory holds a CIFAR-sized layer's matrix (132 MB) easily.
    FUSED_MATMUL_MAX_MACS: the largest product (rows * inner * columns
        multiply-adds) that a GPU computes with the fused matmul + bias +
        ReLU kernel rather than cuBLAS and a bias kernel
        (kernels/matmul_epilogue.py). Measured on an H200 (benchmarks/NOTES.md):
        faster up to 128x512x256 (16.7M), slower from 128x784x512 on.
    GEMM_NS_PER_FLOP, COPY_NS, ADD_NS: one core's cost of a float32 GEMM
        flop in cache, of one element of an im2col copy and of one strided
        read-modify-write add of col2im; they only choose between two
        exact ways of computing col2im, and (with the next two) between
        im2col and Winograd convolutions (ops/nn/conv_algorithm.py).
    WINOGRAD_GEMM_NS_PER_FLOP, WINOGRAD_TRANSFORM_NS: one core's cost of a
        flop of Winograd's 16 GEMMs (inner size C, a little slower than
        im2col's) and of one element of its transform passes.
    WINOGRAD_NHWC_NS: one element of the forward pass's copies between the
        NHWC activations and Winograd's de-interleaved layout, beyond what
        im2col's own reads and writes cost, inside a training step (the
        activations come from, and go to, main memory).
    WINOGRAD_MIN_CHANNELS: input channels below which the cost model keeps
        im2col in every direction (runs of a few floats in the NHWC copies).
    CONV_ALGORITHM: ``auto`` (the cost model), ``im2col`` / ``winograd``
        to force one wherever it applies, or one per direction as
        ``forward,input,kernel`` (e.g. ``im2col,winograd,winograd``)
        (``MINIKERAS_CONV_ALGORITHM``).
    WINOGRAD_BLOCK_BYTES, WINOGRAD_MIN_ROWS: a Winograd block's scratch
        size, and the fewest tiles (GEMM rows) it takes.
    WINOGRAD_CACHED_BLOCKS: scratch blocks (with their plans) each thread
        keeps across calls, for the shapes of a model's convolutions.
    WINOGRAD_BUFSIZE: NumPy's ufunc buffer size (elements) while a
        Winograd block runs (ops/nn/winograd.py, ``_short_rows``).
"""
import os


def _read_algorithms(name, default):
    """``default``, or ``MINIKERAS_<name>``: ``auto``, one algorithm, or three
    (forward, input gradient, kernel gradient) separated by commas."""
    variable = f"MINIKERAS_{name}"
    value = os.environ.get(variable)
    if not value:
        return default
    parts = value.lower().replace(" ", "").split(",")
    algorithms = ("im2col", "winograd")
    if parts == ["auto"] or (len(parts) in (1, 3) and all(part in algorithms for part in parts)):
        return ",".join(parts)
    raise ValueError(f"{variable} must be auto, im2col, winograd or three of im2col/winograd separated by "
                     f"commas (forward,input,kernel), received {value!r}.")


def _read(name, default, kind=int, minimum=0):
    """``default``, or the value of ``MINIKERAS_<name>`` parsed as ``kind``."""
    variable = f"MINIKERAS_{name}"
    what = "an integer" if kind is int else "a number"
    value = os.environ.get(variable)
    if not value:
        return default
    try:
        parsed = kind(value)
    except ValueError:
        raise ValueError(f"{variable} must be {what} >= {minimum}, received {value!r}.") from None
    if parsed < minimum:
        raise ValueError(f"{variable} must be {what} >= {minimum}, received {value!r}.")
    return parsed


NUM_THREADS = _read("NUM_THREADS", None, minimum=1)
BLAS_THREADS = _read("BLAS_THREADS", None, minimum=1)
PARALLEL_MATMUL_MIN = _read("PARALLEL_MATMUL_MIN", 1 << 25)
PARALLEL_PRODUCTS_MIN = _read("PARALLEL_PRODUCTS_MIN", 1 << 23)
BLOCK_ELEMENTS = _read("BLOCK_ELEMENTS", 1 << 18, minimum=1)
ELEMENTWISE_PARALLEL_MIN = _read("ELEMENTWISE_PARALLEL_MIN", 1 << 18)
ELEMENTWISE_BLOCKS_PER_THREAD = _read("ELEMENTWISE_BLOCKS_PER_THREAD", 2, minimum=1)
CHUNK_BYTES = _read("CHUNK_BYTES", 4 << 20, minimum=1)
KEEP_PATCHES_MAX_BYTES = _read("KEEP_PATCHES_MAX_BYTES", 64 << 20)
KEEP_PATCHES_MAX_BYTES_GPU = _read("KEEP_PATCHES_MAX_BYTES_GPU", 512 << 20)
FUSED_MATMUL_MAX_MACS = _read("FUSED_MATMUL_MAX_MACS", 1 << 24)
GEMM_NS_PER_FLOP = _read("GEMM_NS_PER_FLOP", 0.0118, float)
COPY_NS = _read("COPY_NS", 0.15, float)
ADD_NS = _read("ADD_NS", 0.7, float)
WINOGRAD_GEMM_NS_PER_FLOP = _read("WINOGRAD_GEMM_NS_PER_FLOP", 0.0125, float)
WINOGRAD_TRANSFORM_NS = _read("WINOGRAD_TRANSFORM_NS", 0.175, float)
WINOGRAD_NHWC_NS = _read("WINOGRAD_NHWC_NS", 1.25, float)
WINOGRAD_MIN_CHANNELS = _read("WINOGRAD_MIN_CHANNELS", 8, minimum=1)
CONV_ALGORITHM = _read_algorithms("CONV_ALGORITHM", "auto")
WINOGRAD_BLOCK_BYTES = _read("WINOGRAD_BLOCK_BYTES", 4 << 20, minimum=1)
WINOGRAD_MIN_ROWS = _read("WINOGRAD_MIN_ROWS", 256, minimum=1)
WINOGRAD_CACHED_BLOCKS = _read("WINOGRAD_CACHED_BLOCKS", 32, minimum=1)
WINOGRAD_BUFSIZE = _read("WINOGRAD_BUFSIZE", 256, minimum=16)
