"""int4 helpers (Keras 3's ``pack_int4``, ``unpack_int4`` and grouped
asymmetric quantization).

Two int4 values share one byte: along the packed axis, the value of the
even row goes to the low nibble and the odd row's to the high nibble (an
odd length is padded with a zero row). Sub-channel quantization cuts axis 0
(the inputs) into groups of ``block_size`` rows, each with its own scale and
zero point per column: ``q = clip(round(x / scale) + zero, -8, 7)``.
"""
import math

import numpy

from minikeras import ops
from minikeras.autograd import Tensor
from minikeras.backend.dtypes import standardize_dtype
from minikeras.quantizers.quantizers import EPSILON

__all__ = ["pack_int4", "unpack_int4", "abs_max_quantize_grouped_with_zero_point"]


def _check_pack_dtype(dtype):
    if dtype not in ("int8", "uint8"):
        raise ValueError(f"Expected dtype to be 'int8' or 'uint8', but got '{dtype}'.")


def _host(value):
    return value.numpy() if isinstance(value, Tensor) else numpy.asarray(value)


def pack_int4(arr, axis=0, dtype="int8"):
    """Pack int4 values (int8 or uint8 in [-8, 7]) two to a byte along ``axis``
    (``keras.quantizers.pack_int4``; packing runs on the host, as Keras's).

    Args:
        arr: an int8 (or uint8) tensor or array of int4 values.
        axis: the axis whose consecutive pairs share a byte.
        dtype: "int8" or "uint8", the dtype of ``arr`` and of the result.

    Returns:
        ``(packed, packed_shape, original_length)``.

    Raises:
        ValueError: another ``dtype``. TypeError: ``arr`` is not of ``dtype``.

    Example:
        >>> packed, shape, length = pack_int4(numpy.array([[-3, 7], [2, -8], [1, 0]], numpy.int8))
        >>> packed.numpy().tolist(), shape, length
        ([[45, -121], [1, 0]], (2, 2), 3)
    """
    _check_pack_dtype(dtype)
    values = _host(arr)
    if standardize_dtype(values.dtype) != dtype:
        raise TypeError(f"Expected {dtype} tensor for packing, got {standardize_dtype(values.dtype)}.")
    axis = axis + values.ndim if axis < 0 else axis
    values = numpy.moveaxis(values, axis, 0)
    length = values.shape[0]
    if length % 2:
        values = numpy.concatenate([values, numpy.zeros((1,) + values.shape[1:], values.dtype)], axis=0)
    mask = numpy.array(0x0F, dtype=dtype)
    low = numpy.bitwise_and(values[::2], mask)
    high = numpy.bitwise_and(values[1::2], mask)
    packed = numpy.bitwise_or(low, numpy.left_shift(high, numpy.array(4, dtype=dtype))).astype(dtype)
    packed = numpy.moveaxis(packed, 0, axis)
    return ops.convert_to_tensor(packed), tuple(packed.shape), length


def unpack_int4(packed, orig_len, axis=0, dtype="int8"):
    """Undo :func:`pack_int4` (``keras.quantizers.unpack_int4``): int4 values in
    [-8, 7] (or [0, 15] for "uint8") with ``orig_len`` entries along ``axis``.

    Raises:
        ValueError: another ``dtype``. TypeError: ``packed`` is not int8/uint8.
    """
    _check_pack_dtype(dtype)
    packed = ops.convert_to_tensor(packed)
    if standardize_dtype(packed.dtype) not in ("int8", "uint8"):
        raise TypeError(f"Expected int8 or uint8 tensor for unpacking, got {packed.dtype}")
    rank = packed.ndim
    axis = axis + rank if axis < 0 else axis
    order = [axis] + [i for i in range(rank) if i != axis]
    moved = ops.transpose(packed, order) if axis else packed
    mask = ops.cast(15, standardize_dtype(packed.dtype))
    low = ops.bitwise_and(moved, mask)
    high = ops.bitwise_and(ops.right_shift(moved, 4), mask)
    if dtype == "int8":  # nibbles 8..15 are -8..-1: (n ^ 8) - 8
        eight = ops.cast(8, standardize_dtype(packed.dtype))
        low = ops.subtract(ops.bitwise_xor(low, eight), eight)
        high = ops.subtract(ops.bitwise_xor(high, eight), eight)
    interleaved = ops.stack([ops.cast(low, dtype), ops.cast(high, dtype)], axis=1)
    unpacked = ops.reshape(interleaved, (-1,) + tuple(moved.shape[1:]))[:orig_len]
    if axis:
        unpacked = ops.transpose(unpacked, [order.index(i) for i in range(rank)])
    return unpacked


def abs_max_quantize_grouped_with_zero_point(inputs, block_size, value_range=(-8, 7), dtype="int8",
                                             epsilon=EPSILON, to_numpy=False):
    """Asymmetric quantization of a 2-D ``(input_dim, output_dim)`` tensor in
    groups of ``block_size`` rows (``keras.quantizers.abs_max_quantize_grouped_with_zero_point``).

    Each group and column gets ``scale = (max - min + epsilon) / (high - low)``
    and ``zero = clip(round(-min / scale) + low, low, high)``. As in Keras,
    the device path (``to_numpy=False``) widens a constant group to
    ``[min - 1, max + 1]`` first; the host path does not.

    Returns:
        ``(quantized, scale, zero_point)``: ``(input_dim, output_dim)`` in
        ``dtype``, and ``(ceil(input_dim / block_size), output_dim)`` float
        scales and int8 zero points.
    """
    values = _host(inputs)
    source_dtype = values.dtype
    if values.ndim != 2:
        raise ValueError(f"abs_max_quantize_grouped_with_zero_point expects a 2-D (input_dim, output_dim) tensor, "
                         f"received shape {values.shape}.")
    if isinstance(block_size, bool) or not isinstance(block_size, int) or block_size <= 0:
        raise ValueError(f"abs_max_quantize_grouped_with_zero_point expects a positive int block_size, received "
                         f"{block_size!r}.")
    low, high = value_range
    rows, columns = values.shape
    groups = math.ceil(rows / block_size)
    padded = numpy.zeros((groups * block_size, columns), values.dtype)
    padded[:rows] = values
    grouped = padded.reshape(groups, block_size, columns)
    minimum = grouped.min(axis=1, keepdims=True)
    maximum = grouped.max(axis=1, keepdims=True)
    if not to_numpy:
        constant = minimum == maximum
        minimum = numpy.where(constant, minimum - 1, minimum)
        maximum = numpy.where(constant, maximum + 1, maximum)
    scale = numpy.divide(numpy.subtract(maximum, minimum) + epsilon, high - low).astype(source_dtype)
    if not to_numpy:
        scale = numpy.where(scale <= 0, numpy.asarray(1e-8, source_dtype), scale)
    zero = numpy.clip(numpy.round(numpy.divide(-minimum, scale)) + low, low, high)
    quantized = numpy.clip(numpy.round(numpy.divide(grouped, scale)) + zero, low, high).astype(dtype)
    quantized = quantized.reshape(groups * block_size, columns)[:rows]
    return (ops.convert_to_tensor(quantized), ops.convert_to_tensor(scale[:, 0].astype(source_dtype)),
            ops.convert_to_tensor(zero[:, 0].astype("int8")))
