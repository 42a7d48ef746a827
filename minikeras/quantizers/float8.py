"""Float8 scaling (Keras 3's ``compute_float8_scale``, ``compute_float8_amax_history``
and ``quantize_and_dequantize``), on Tensors.

Delayed scaling keeps, per tensor, a history of absolute maxima; the scale
for the next step is ``amax / dtype_max`` of the largest of them (so the
tensor's range maps onto the float8 range), or the previous scale while no
finite, positive maximum has been seen. ops/nn/float8.py holds the array
versions the float8 layers use inside their backward pass.
"""
from minikeras import ops
from minikeras.ops.nn.float8 import FLOAT8_FORMATS, RoundToFloat8, float8_max

__all__ = ["compute_float8_scale", "compute_float8_amax_history", "quantize_and_dequantize"]


def compute_float8_scale(amax, scale, dtype_max, margin=0):
    """The next scale from the largest absolute value ``amax``
    (``keras.quantizers.compute_float8_scale``).

    Args:
        amax: the maximum of the amax history.
        scale: the current scale (kept where ``amax`` is 0 or not finite).
        dtype_max: the float8 format's largest value (448 for e4m3fn).
        margin: a power of two of headroom.

    Returns:
        ``1 / (dtype_max / amax / 2**margin)``, elementwise.
    """
    amax, scale = ops.convert_to_tensor(amax), ops.convert_to_tensor(scale)
    current = ops.reciprocal(scale)
    keep = ops.logical_or(ops.less_equal(amax, 0.0), ops.logical_not(ops.isfinite(amax)))
    factor = ops.divide(ops.divide(dtype_max, ops.where(keep, ops.ones_like(amax), amax)), 2 ** margin)
    return ops.reciprocal(ops.where(keep, current, factor))


def compute_float8_amax_history(x, amax_history):
    """The history rolled one place left, with ``max(|x|)`` written at
    position 0 (``keras.quantizers.compute_float8_amax_history``)."""
    amax_history = ops.convert_to_tensor(amax_history)
    amax = ops.cast(ops.max(ops.abs(ops.convert_to_tensor(x))), amax_history.dtype)
    return ops.scatter_update(ops.roll(amax_history, shift=-1), [[0]], ops.reshape(amax, [1]))


def quantize_and_dequantize(inputs, scale, quantized_dtype, compute_dtype):
    """``float8(clip(inputs / scale)) * scale`` in ``compute_dtype``
    (``keras.quantizers.quantize_and_dequantize``).

    The gradient flows as through Keras's ops: straight through the float8
    rounding (a cast), cut where the clip saturates.

    Args:
        inputs: a float tensor.
        scale: the scale (a scalar tensor or a number).
        quantized_dtype: "float8_e4m3fn" or "float8_e5m2".
        compute_dtype: the dtype of the computation and the result.

    Raises:
        ValueError: another ``quantized_dtype``.
    """
    if quantized_dtype not in FLOAT8_FORMATS:
        raise ValueError(f"quantize_and_dequantize expects quantized_dtype 'float8_e4m3fn' or 'float8_e5m2', "
                         f"received {quantized_dtype!r}.")
    limit = float8_max(quantized_dtype)
    scale = ops.cast(ops.convert_to_tensor(scale), compute_dtype)
    x = ops.divide(ops.cast(ops.convert_to_tensor(inputs), compute_dtype), scale)
    x = ops.clip(x, -limit, limit)
    x = RoundToFloat8(quantized_dtype).apply(x)
    return ops.multiply(x, scale)
