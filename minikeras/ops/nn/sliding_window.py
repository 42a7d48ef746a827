"""Sliding-window machinery shared by the convolution and pooling ops (NHWC).

Everything here works on raw arrays through ``xp`` (NumPy or CuPy). A
:class:`WindowGeometry` holds the sizes of one 2-D sliding-window op (input,
window, strides, dilation, padding, output) and the index arithmetic the ops
share: the im2col patch matrix of a block of samples, and the scatter-add
back (col2im) that its gradient needs.

Why chunks: on the CPU a convolution is an im2col copy followed by a matrix
product whose right-hand side (the kernel) is small. Done over the whole
batch at once, the patch matrix (``N*Ho*Wo`` rows of ``kh*kw*C`` floats,
e.g. 132 MB for a 128x32x32x32 input) goes to main memory and back, and the
product runs at about a third of the speed it reaches when its operand sits
in cache (benchmarks/NOTES.md, "CPU tuning constants"). So the CPU path builds
the patch matrix a few samples at a time into one reused buffer and multiplies
each block while it is still in cache: one GEMM per block, a handful of
blocks per call. On a GPU there is one block (the whole batch): one GEMM.
"""
import numpy

from minikeras.backend import tuning
from minikeras import kernels
from minikeras.backend.blocks import even_slices
from minikeras._support.argument_validation import INT32_MAX, is_int, standardize_padding, standardize_tuple  # noqa: F401

def as_pair(op_name, name, value):
    """Return ``value`` (an int or a pair of ints, all positive) as a pair.

    Raises:
        ValueError: ``value`` is not an int or pair of ints, or is not positive.
    """
    return standardize_tuple(op_name, name, value, 2)


def as_single(op_name, name, value):
    """Return ``value`` (a positive int, or a 1-tuple of one) as an int.

    Raises:
        ValueError: ``value`` is not such an int or is not positive.
    """
    return standardize_tuple(op_name, name, value, 1)[0]


def check_padding(op_name, padding, allowed=("valid", "same")):
    """Return ``padding`` lowercased, or raise ValueError when it is unknown."""
    return standardize_padding(op_name, padding, allowed)


def same_padding(size, window, stride):
    """TensorFlow's SAME padding of one axis: (before, after), the odd one after."""
    out = -(-size // stride)
    total = max((out - 1) * stride + window - size, 0)
    return total // 2, total - total // 2


class WindowGeometry:
    """The sizes of one 2-D sliding-window op on an NHWC input.

    Args:
        op_name: the op, for error messages.
        input_shape: (N, H, W, C).
        window: (kh, kw), the kernel or pool size.
        strides: (sh, sw).
        dilation: (dh, dw).
        padding: "valid", "same" (TensorFlow's), "causal" (left padding of
            the width axis, for 1-D ops), or explicit ((top, bottom), (left, right)).
        shape_note: how to describe the input in errors (defaults to its shape).

    Raises:
        ValueError: the (dilated) window is larger than the padded input.
    """

    def __init__(self, op_name, input_shape, window, strides, dilation, padding, shape_note=None):
        self.batch, self.height, self.width, self.channels = input_shape
        self.window = window
        self.strides = strides
        self.dilation = dilation
        effective = tuple((k - 1) * d + 1 for k, d in zip(window, dilation))
        if padding == "valid":
            pads = ((0, 0), (0, 0))
        elif padding == "same":
            pads = tuple(same_padding(size, e, s) for size, e, s in zip((self.height, self.width), effective, strides))
        elif padding == "causal":
            pads = ((0, 0), (effective[1] - 1, 0))
        else:
            pads = tuple(tuple(p) for p in padding)
        if max(effective) > INT32_MAX or max(p for pair in pads for p in pair) > INT32_MAX:
            raise ValueError(f"{op_name}: the dilated window {effective} and its padding {pads} must stay at most "
                             f"{INT32_MAX} (window kernels take 32-bit sizes); received window {tuple(window)} with "
                             f"dilation {tuple(dilation)}.")
        self.pads = pads
        self.padded = (self.height + sum(pads[0]), self.width + sum(pads[1]))
        if self.padded[0] < effective[0] or self.padded[1] < effective[1]:
            note = shape_note or f"input shape {tuple(input_shape)}"
            dilated = f" (dilated to {effective[0]}x{effective[1]})" if effective != tuple(window) else ""
            raise ValueError(
                f"{op_name}: the {window[0]}x{window[1]} window{dilated} is larger than the padded input "
                f"({self.padded[0]}x{self.padded[1]}) for {note} with padding {padding!r}."
            )
        self.out_h = (self.padded[0] - effective[0]) // strides[0] + 1
        self.out_w = (self.padded[1] - effective[1]) // strides[1] + 1
        self.has_padding = any(p for pair in pads for p in pair)
        self.patch_size = window[0] * window[1] * self.channels
        self.rows_per_sample = self.out_h * self.out_w
        # Per kernel offset (i, j): the output positions it reaches inside the
        # unpadded input, and the input positions they read (offsets that see
        # only padding are left out).
        row_ranges = _clipped_ranges(self.height, window[0], strides[0], dilation[0], pads[0][0], self.out_h)
        col_ranges = _clipped_ranges(self.width, window[1], strides[1], dilation[1], pads[1][0], self.out_w)
        self.offsets = [
            (i, j, rows, cols)
            for i, rows in enumerate(row_ranges)
            for j, cols in enumerate(col_ranges)
            if rows is not None and cols is not None
        ]

    def samples_per_chunk(self, device, bytes_per_sample):
        """How many samples one block holds: all of them on a GPU, about
        ``tuning.CHUNK_BYTES`` on the CPU."""
        if not device.host_kernels or self.batch == 0:
            return max(self.batch, 1)
        return max(1, min(self.batch, tuning.CHUNK_BYTES // max(bytes_per_sample, 1)))

    def pad_buffer(self, xp, samples, dtype, fill=0):
        """A reusable (samples, Hp, Wp, C) buffer whose border holds ``fill``; None without padding."""
        if not self.has_padding:
            return None
        shape = (samples, self.padded[0], self.padded[1], self.channels)
        return xp.zeros(shape, dtype) if fill == 0 else xp.full(shape, fill, dtype)

    def padded_block(self, x, start, stop, buffer):
        """Samples ``start:stop`` of ``x`` with their padding (a view when there is none)."""
        if buffer is None:
            return x[start:stop]
        block = buffer[: stop - start]
        (top, _), (left, _) = self.pads
        block[:, top : top + self.height, left : left + self.width] = x[start:stop]
        return block

    def windows(self, xp, padded):
        """A read-only strided view (n, Ho, Wo, kh, kw, C) of the windows of ``padded``."""
        stride_n, stride_h, stride_w, stride_c = padded.strides
        shape = (padded.shape[0], self.out_h, self.out_w, self.window[0], self.window[1], padded.shape[3])
        strides = (
            stride_n,
            stride_h * self.strides[0],
            stride_w * self.strides[1],
            stride_h * self.dilation[0],
            stride_w * self.dilation[1],
            stride_c,
        )
        return xp.lib.stride_tricks.as_strided(padded, shape, strides)

    def scatter_add(self, target, patches):
        """Add ``patches`` (n, Ho, Wo, kh, kw, C) into ``target`` (n, H, W, C) where each came from.

        The padding is skipped by clipping each kernel offset's output range,
        so no padded buffer (and no crop copy) is needed: kh*kw vectorised adds.
        """
        for i, j, (out_rows, in_rows), (out_cols, in_cols) in self.offsets:
            target[:, in_rows, in_cols] += patches[:, out_rows, out_cols, i, j]


_GEOMETRIES = {}
_GEOMETRIES_KEPT = 1024


def window_geometry(op_name, input_shape, window, strides, dilation, padding, shape_note=None):
    """``WindowGeometry(...)``, kept per arguments: a model's layers ask for the
    same few geometries every step, and a geometry is never changed once made.

    Explicit paddings (lists) are not kept; failures are not kept (the next
    call raises again)."""
    if type(padding) is not str:
        return WindowGeometry(op_name, input_shape, window, strides, dilation, padding, shape_note)
    key = (op_name, tuple(input_shape), tuple(window), tuple(strides), tuple(dilation), padding, shape_note)
    geometry = _GEOMETRIES.get(key)
    if geometry is None:
        geometry = WindowGeometry(op_name, input_shape, window, strides, dilation, padding, shape_note)
        if len(_GEOMETRIES) >= _GEOMETRIES_KEPT:
            _GEOMETRIES.clear()
        _GEOMETRIES[key] = geometry
    return geometry


def _clipped_ranges(size, window, stride, dilation, pad_before, out_size):
    """For each window offset k: (output slice, input slice) of the positions whose
    input index ``o*stride + k*dilation - pad_before`` lies inside [0, size), or None."""
    ranges = []
    for k in range(window):
        shift = k * dilation - pad_before
        first = max(0, -(shift // stride))  # ceil(-shift / stride) when shift < 0
        last = min(out_size - 1, (size - 1 - shift) // stride)
        if last < first:
            ranges.append(None)
            continue
        start = first * stride + shift
        stop = last * stride + shift + 1
        ranges.append((slice(first, last + 1), slice(start, stop, stride)))
    return ranges


def im2col_products(device, source, geometry, right=None, left=None, keep=False, epilogue=None, left_block=None):
    """``cols @ right`` and ``cols.T @ left`` where ``cols`` is the patch matrix of ``source``.

    ``cols`` (N*Ho*Wo, kh*kw*C) is normally never built whole: each block of
    samples is copied into one reused buffer and used for both products while
    it is in cache (see the module docstring).

    Args:
        xp: the array module.
        source: (N, H, W, C), unpadded (padding is applied block by block).
        geometry: its WindowGeometry.
        right: (kh*kw*C, F) or None.
        left: (N*Ho*Wo, G) or None.
        keep: build the whole patch matrix (block by block, still multiplied
            in cache) and return it, for a caller that will reuse it.
        epilogue: ``epilogue(out_rows)``, called on each block of
            ``cols @ right`` (a 2-D view) right after its product, while it
            is in cache, to finish it in place (bias, ReLU).
        left_block: ``left_block(rows)`` gives the rows (a slice) of
            ``left`` to multiply, instead of ``left[rows]``: a caller can
            prepare each block of ``left`` while it is in cache (mask it,
            sum it). Called once per block, from the thread running it.

    Returns:
        (cols @ right of shape (N*Ho*Wo, F) or None, cols.T @ left of shape
        (kh*kw*C, G) or None, cols or None).
    """
    xp = device.xp
    batch, rows, patch = geometry.batch, geometry.rows_per_sample, geometry.patch_size
    dtype = source.dtype
    forward = None if right is None else xp.empty((batch * rows, right.shape[1]), xp.result_type(dtype, right.dtype))
    # A block's patch rows and its rows of the product's output (or of ``left``)
    # stay in cache together: with few input channels the output is the larger.
    features = max(0 if right is None else right.shape[1], 0 if left is None else left.shape[1])
    per = geometry.samples_per_chunk(device, rows * (patch + features) * source.itemsize)
    kh, kw = geometry.window
    starts = list(range(0, batch, per))
    # With few channels a window row is only kw*C floats: copied patch-major
    # (each patch element's values for all positions in a row), the copy
    # runs along whole image rows instead, and the product reads the matrix
    # transposed (measured: a 1-channel 3x3 block 2x faster, 3 channels 15%).
    patch_major = few_channels(device, geometry)

    def block_shape(samples):
        if patch_major:
            return (kh, kw, geometry.channels, samples, geometry.out_h, geometry.out_w)
        return (samples, geometry.out_h, geometry.out_w, kh, kw, geometry.channels)

    shared = xp.empty(block_shape(batch), dtype) if keep else None

    im2col = kernels.get("im2col", device)

    def buffers():  # each thread's own (its padded buffer, for `per` samples, is made on first use)
        return [None, per], (shared if keep else xp.empty(block_shape(per), dtype))

    def work(index, state):
        padding, buffer = state
        start = starts[index]
        stop = min(batch, start + per)
        first, count = (start if keep else 0), stop - start
        if patch_major:
            block = buffer[:, :, :, first:first + count]
            im2col(source[start:stop], geometry, block, True, padding)
            cols = block.reshape(patch, count * rows).T
        else:
            block = buffer[first:first + count]
            im2col(source[start:stop], geometry, block, False, padding)
            cols = block.reshape(count * rows, patch)
        span = slice(start * rows, stop * rows)
        if right is not None:
            device.gemm(cols, right, out=forward[span])
            if epilogue is not None:
                epilogue(forward[span])
        if left is not None:
            return device.gemm(cols.T, left[span] if left_block is None else left_block(span))
        return None

    partials = device.parallel_blocks(work, len(starts), buffers)
    transposed = None
    if left is not None:
        transposed = device.sum_in_order(partials, (patch, left.shape[1]), xp.result_type(dtype, left.dtype))
    if not keep:
        return forward, transposed, None
    kept = shared.reshape(patch, batch * rows).T if patch_major else shared.reshape(batch * rows, patch)
    return forward, transposed, kept


def transposed_product(device, cols, left, left_block=None):
    """``cols.T @ left`` for a whole patch matrix ``cols`` (N*Ho*Wo, P) kept
    from forward, in blocks of rows shared among the CPU threads (one block
    on a GPU), summed in block order; ``left_block`` as in im2col_products."""
    xp = device.xp
    rows, patch = cols.shape
    per_row = (patch + left.shape[1]) * cols.itemsize
    count = 1 if not device.host_kernels else max(1, -(-rows * per_row // tuning.CHUNK_BYTES))
    spans = even_slices(rows, count)

    def work(index, _):
        span = spans[index]
        return device.gemm(cols[span].T, left[span] if left_block is None else left_block(span))

    partials = device.parallel_blocks(work, len(spans))
    return device.sum_in_order(partials, (patch, left.shape[1]), xp.result_type(cols.dtype, left.dtype))


def few_channels(device, geometry):
    """Whether a window row (kw*C floats) is too short for a fast row-wise
    im2col copy on the CPU: typically a first layer (grayscale or RGB)."""
    return device.host_kernels and geometry.window[1] * geometry.channels < 16


def keeps_patch_matrix(device, geometry):
    """Whether a convolution should keep its patch matrix for backward instead of rebuilding it.

    On the CPU only for inputs with few channels (typically the first layer,
    e.g. RGB or grayscale images), whose im2col copies runs of only kw*C
    floats and so costs nearly as much as its small-K product, and only while
    the matrix stays small (kh*kw times the input, at most
    ``tuning.KEEP_PATCHES_MAX_BYTES``; the measured gain is in
    benchmarks/NOTES.md).

    On a GPU, for any input while the matrix stays under
    ``tuning.KEEP_PATCHES_MAX_BYTES_GPU``: rebuilding it in backward costs a
    kernel launch, which is what a small model's GPU step is bound by
    (benchmarks/gpu_launches.py).
    """
    size = geometry.batch * geometry.rows_per_sample * geometry.patch_size * 4
    if not device.host_kernels:
        return size <= tuning.KEEP_PATCHES_MAX_BYTES_GPU
    return size <= tuning.KEEP_PATCHES_MAX_BYTES and few_channels(device, geometry)


def col2im_product(device, left, right, geometry, dtype):
    """``col2im(left @ right)``: scatter-add each row's patch back into an (N, H, W, C) array.

    Args:
        device: the Device it runs on.
        left: (N*Ho*Wo, F), e.g. the output gradient.
        right: (F, kh*kw*C), e.g. the kernel matrix transposed (a view is fine).
        geometry: the WindowGeometry of the (N, H, W, C) result.
        dtype: the result's dtype.
    """
    xp = device.xp
    if geometry.strides == (1, 1) and _full_correlation_is_cheaper(device, geometry, left.shape[1]) and \
            bool(xp.isfinite(right).all()):
        # (a NaN or inf weight would meet the correlation's zero padding: 0 * inf is NaN where the
        # scatter-add below, as TensorFlow's and torch's kernels, never reaches)
        pads = _full_correlation_pads(geometry)
        if pads is not None:
            return _full_correlation(device, left, right, geometry, pads)
    batch, rows, patch = geometry.batch, geometry.rows_per_sample, geometry.patch_size
    result = xp.empty((batch, geometry.height, geometry.width, geometry.channels), dtype)
    per = geometry.samples_per_chunk(device, rows * patch * numpy.dtype(dtype).itemsize)
    kh, kw = geometry.window
    starts = list(range(0, batch, per))
    col2im = kernels.get("col2im", device)

    def work(index, buffer):
        start = starts[index]
        stop = min(batch, start + per)
        block = buffer[: (stop - start) * rows]
        device.gemm(left[start * rows : stop * rows], right, out=block)
        patches = block.reshape(stop - start, geometry.out_h, geometry.out_w, kh, kw, geometry.channels)
        col2im(patches, geometry, result[start:stop])

    device.parallel_blocks(work, len(starts), lambda: xp.empty((per * rows, patch), dtype))
    return result


def _full_correlation_is_cheaper(device, geometry, features):
    """Whether col2im via a full correlation (one im2col copy of the ``features``-channel
    gradient, a GEMM over every input pixel) beats the GEMM over output pixels plus
    kh*kw scatter-adds. Never on a GPU: there the scatter-adds are one fused
    col2im kernel, so the GEMM and it are two launches against three (the
    flipped kernel's copy, im2col and the GEMM)."""
    if not device.host_kernels:
        return False
    channels = geometry.channels
    # Per-element costs measured on one core (tuning.py); they only choose
    # between two exact methods.
    gemm = tuning.GEMM_NS_PER_FLOP
    full = geometry.height * geometry.width * features * (2 * channels * gemm + tuning.COPY_NS)
    scatter = geometry.rows_per_sample * channels * (2 * features * gemm + tuning.ADD_NS)
    return full < scatter


def _full_correlation_pads(geometry):
    """The padding of the stride-1 "full" correlation that computes col2im, or None.

    With stride 1, ``col2im(left @ right)`` is ``left`` (seen as an image)
    padded by ``(k - 1) * d - pad`` on each side and correlated with the
    flipped kernel; None when that padding would be negative.
    """
    (kh, kw), (dh, dw) = geometry.window, geometry.dilation
    (top, bottom), (left, right) = geometry.pads
    pads = (((kh - 1) * dh - top, (kh - 1) * dh - bottom), ((kw - 1) * dw - left, (kw - 1) * dw - right))
    if min(min(pair) for pair in pads) < 0:
        return None
    return pads


def _full_correlation(device, left, right, geometry, pads):
    """``col2im(left @ right)`` for stride 1, as one im2col product (no scatter-add).

    Where _full_correlation_is_cheaper says so, this replaces kh*kw strided
    read-modify-write passes (on the CPU they can take as long as the GEMM
    itself) by one im2col copy (the measured gain is in benchmarks/NOTES.md).
    """
    xp = device.xp
    features = left.shape[1]
    kh, kw = geometry.window
    kernel = right.reshape(features, kh, kw, geometry.channels)[:, ::-1, ::-1, :]
    matrix = xp.ascontiguousarray(kernel.transpose(1, 2, 0, 3)).reshape(kh * kw * features, geometry.channels)
    image_shape = (geometry.batch, geometry.out_h, geometry.out_w, features)
    image_geometry = WindowGeometry("col2im", image_shape, geometry.window, (1, 1), geometry.dilation, pads)
    result, _, _ = im2col_products(device, left.reshape(image_shape), image_geometry, right=matrix)
    return result.reshape(geometry.batch, geometry.height, geometry.width, geometry.channels)
