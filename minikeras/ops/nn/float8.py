"""Float8 quantize-dequantize with delayed scaling (Keras 3's float8 training).

Keras's float8 layers compute ``matmul(qdq(inputs), qdq(kernel))`` where
``qdq(x) = float8(clip(x / scale)) * scale`` in ``float8_e4m3fn``, and
quantize-dequantize the output's gradient in ``float8_e5m2``. Each scale
comes from a history of absolute maxima (Transformer Engine's delayed
scaling): the backward pass hands every scale and history variable its
next value as its "gradient", and the optimizer overwrites the variable
with it (``overwrite_with_gradient``).

Float8 values are made without a float8 array type (CuPy has none):
:func:`round_to_float8` rounds float32 values to the nearest float8 value
(ties to even, subnormals included), which equals ml_dtypes' cast for every
value in range, so the same code runs on NumPy, CuPy and the simulated GPU.
The matmul itself stays in the compute dtype: the values are float8 values,
but the GEMM is not a float8 GEMM (cuBLASLt's FP8 GEMMs on Hopper would
need a card; Keras's TensorFlow backend also computes a float GEMM here
unless XLA rewrites the pattern).
"""
import numpy

from minikeras.autograd import Function

__all__ = []

#: name -> (mantissa bits, smallest normal exponent, largest finite value)
FLOAT8_FORMATS = {
    "float8_e4m3fn": (3, -6, 448.0),
    "float8_e5m2": (2, -14, 57344.0),
}


def float8_max(name):
    """The largest finite value of a float8 format (448 for e4m3fn, 57344 for e5m2)."""
    return FLOAT8_FORMATS[name][2]


def round_to_float8(xp, x, name):
    """``x`` (float32, within the format's range) rounded to the nearest
    value of float8 format ``name``, ties to even, as float32."""
    mantissa_bits, min_exponent, _ = FLOAT8_FORMATS[name]
    _, exponent = xp.frexp(x)  # x = m * 2**exponent with 0.5 <= |m| < 1
    exponent = xp.maximum(exponent.astype(numpy.int32) - 1, min_exponent)  # subnormals share the smallest exponent
    quantum = xp.ldexp(xp.ones_like(x), exponent - mantissa_bits)  # the spacing of the format around x
    return xp.rint(x / quantum) * quantum


def quantize_dequantize(xp, x, scale, name):
    """``float8(clip(x / scale, -max, max)) * scale`` in ``x``'s dtype (Keras's
    ``quantize_and_dequantize`` with the compute dtype of ``x``)."""
    dtype = x.dtype
    scale = scale.astype(dtype)
    limit = float8_max(name)
    scaled = xp.clip(x / scale, -limit, limit)
    rounded = round_to_float8(xp, scaled.astype(numpy.float32), name).astype(dtype)
    return rounded * scale


def next_scale(xp, amax, scale, dtype_max, margin=0):
    """Keras's ``compute_float8_scale`` on arrays: ``1 / (dtype_max / amax / 2**margin)``,
    keeping ``scale`` where ``amax`` is zero or not finite."""
    keep = xp.logical_or(amax <= 0, ~xp.isfinite(amax))
    inverse = (dtype_max / xp.where(keep, 1, amax)) / (2 ** margin)
    inverse = xp.where(keep, 1 / scale, inverse)
    return (1 / inverse).astype(scale.dtype)


def next_amax_history(xp, x, history):
    """Keras's ``compute_float8_amax_history`` on arrays: the history rolled
    one place to the left, then ``max(|x|)`` written at position 0."""
    updated = xp.roll(history, -1)
    updated[0] = xp.max(xp.abs(x)).astype(history.dtype) if x.size else 0
    return updated


class Float8QuantizeInputs(Function):
    """``qdq(x)`` in ``float8_e4m3fn`` for an input or kernel of a float8 layer.

    ``apply(x, scale, amax_history)``: the gradient of ``x`` passes straight
    through; in training, ``scale`` and ``amax_history`` receive their next
    values (computed from the history before this step, and from ``x``).
    """

    def __init__(self, training):
        self.training = bool(training)

    def forward(self, x, scale, amax_history):
        xp = self.device.xp
        if self.training:
            limit = float8_max("float8_e4m3fn")
            self.updates = (next_scale(xp, xp.max(amax_history, axis=0), scale, limit),
                            next_amax_history(xp, x, amax_history))
        else:
            self.updates = (None, None)
        return quantize_dequantize(xp, x, scale, "float8_e4m3fn")

    def backward(self, grad):
        new_scale, new_history = self.updates
        self.updates = (None, None)
        return grad, new_scale, new_history


class Float8QuantizeOutputGradient(Function):
    """The output of a float8 matmul unchanged, its gradient quantize-dequantized
    in ``float8_e5m2``; ``scale`` and ``amax_history`` receive their next
    values from the gradient (``apply(outputs, scale, amax_history)``)."""

    def forward(self, outputs, scale, amax_history):
        self.save_for_backward(scale, amax_history)
        return outputs.view()

    def backward(self, grad):
        xp = self.device.xp
        scale, history = self.saved
        limit = float8_max("float8_e5m2")
        new_scale = next_scale(xp, xp.max(history, axis=0), scale, limit)
        return quantize_dequantize(xp, grad, scale, "float8_e5m2"), new_scale, next_amax_history(xp, grad, history)


class RoundToFloat8(Function):
    """``x`` rounded to float8 values (dtype kept); the gradient passes
    unchanged, as through TensorFlow's cast to a float8 dtype."""

    def __init__(self, name):
        if name not in FLOAT8_FORMATS:
            raise ValueError(f"quantize_and_dequantize expects quantized_dtype 'float8_e4m3fn' or 'float8_e5m2', "
                             f"received {name!r}.")
        self.format = name

    def forward(self, x):
        return round_to_float8(self.device.xp, x.astype(numpy.float32), self.format).astype(x.dtype)

    def backward(self, grad):
        return grad
