"""Fake quantization with a trainable range (Keras 3's ``fake_quant_with_min_max_vars``).

The range ``[min, max]`` is nudged so that zero is exactly representable,
the inputs are clamped to it, rounded to one of ``2**num_bits`` levels
(``2**num_bits - 1`` with ``narrow_range``) and mapped back to floats. The
gradient is the straight-through estimator inside the range; the part of
the upstream gradient where the inputs were clamped goes to ``min`` or
``max``, so the range trains (TensorFlow's ``FakeQuantWithMinMaxVarsGradient``).
Per channel (``axis``), ``min`` and ``max`` hold one value per index of that axis.
"""
import numpy

from minikeras.autograd import Function

__all__ = []


def nudged_range(xp, minimum, maximum, num_bits, narrow_range):
    """``(nudged_min, nudged_max, scale, inverse_scale)`` in float32 (Keras's ``adjust_and_nudge``)."""
    minimum = minimum.astype(numpy.float32)
    maximum = maximum.astype(numpy.float32)
    quant_max = (1 << num_bits) - 1
    quant_min = 1 if narrow_range else 0
    spread = maximum - minimum
    scale = spread / (quant_max - quant_min)
    inverse_scale = (quant_max - quant_min) / spread
    zero_point = xp.rint(xp.clip(quant_min - minimum / scale, quant_min, quant_max))
    return (quant_min - zero_point) * scale, (quant_max - zero_point) * scale, scale, inverse_scale


class FakeQuantWithMinMaxVars(Function):
    """``apply(x, minimum, maximum)``; see the module docstring.

    Args:
        num_bits: bits of the quantized levels.
        narrow_range: use ``[1, 2**num_bits - 1]``.
        axis: the channel axis (canonical, non-negative) or None for one range.
    """

    def __init__(self, num_bits, narrow_range, axis):
        self.num_bits, self.narrow_range, self.axis = num_bits, narrow_range, axis

    def _channel_shape(self, x, value):
        """``value`` shaped to broadcast along ``axis`` of ``x``."""
        if self.axis is None:
            return value.reshape(())
        shape = [1] * x.ndim
        shape[self.axis] = -1
        return value.reshape(shape)

    def forward(self, x, minimum, maximum):
        xp = self.device.xp
        self.range_meta = ((minimum.shape, minimum.dtype), (maximum.shape, maximum.dtype))
        low, high, scale, inverse = nudged_range(xp, self._channel_shape(x, minimum),
                                                 self._channel_shape(x, maximum), self.num_bits, self.narrow_range)
        quant_zero = xp.floor(-low * inverse + 0.5)
        shifted = xp.clip(x.astype(numpy.float32), low, high) - low
        result = xp.floor(shifted * inverse - quant_zero + 0.5) * scale
        self.save_for_backward(x, low, high)
        return result.astype(x.dtype)

    def backward(self, grad):
        xp = self.device.xp
        x, low, high = self.saved
        below, above = x <= low, x >= high
        grad_x = xp.where(xp.logical_and(x >= low, x <= high), grad, 0).astype(grad.dtype)
        axes = tuple(i for i in range(x.ndim) if i != self.axis) if self.axis is not None else None
        (min_shape, min_dtype), (max_shape, max_dtype) = self.range_meta
        grad_min = xp.sum(xp.where(below, grad, 0), axis=axes).reshape(min_shape).astype(min_dtype)
        grad_max = xp.sum(xp.where(above, grad, 0), axis=axes).reshape(max_shape).astype(max_dtype)
        return grad_x, grad_min, grad_max
