"""Root-mean-square normalization (Zhang & Sennrich, 2019) as one op:
``x * rsqrt(mean(x^2) + epsilon) * scale`` over some axes.

The forward keeps the normalized input and the reciprocal RMS, and the
backward is the closed form (``r * (u - x_hat * mean(u * x_hat))`` with
``u = grad * scale``), instead of recording square, mean, rsqrt and two
multiplies as separate graph nodes.

Private to ``layers.RMSNormalization`` (``keras.ops.rms_normalization``
belongs to the ops namespace, whose wrapper may call this Function).
"""
from minikeras.autograd import Function

__all__ = []


class RmsNorm(Function):
    """RMS normalization over ``axes`` times a ``scale`` broadcast to the input."""

    def __init__(self, axes, epsilon):
        self.axes, self.epsilon = axes, epsilon

    def forward(self, x, scale):
        xp = self.device.xp
        mean_square = (x * x).mean(axis=self.axes, keepdims=True)
        reciprocal = 1.0 / xp.sqrt(mean_square + self.epsilon)
        normalized = x * reciprocal
        self.save_for_backward(normalized, reciprocal, scale)
        return normalized * scale

    def backward(self, grad):
        normalized, reciprocal, scale = self.saved
        scaled = grad * scale
        grad_x = reciprocal * (scaled - normalized * (scaled * normalized).mean(axis=self.axes, keepdims=True))
        grad_scale = None
        if self.needs_input_grad[1]:
            grad_scale = grad * normalized  # summed to scale's shape by the engine
        return grad_x, grad_scale


def _rms_norm(x, scale, axes, epsilon):
    """``x * rsqrt(mean(x^2, axes) + epsilon) * scale`` (``scale`` already
    shaped to broadcast against ``x``)."""
    return RmsNorm(tuple(axes), float(epsilon)).apply(x, scale)
