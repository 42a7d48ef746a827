"""Sparsemax (Martins & Astudillo, 2016): the Euclidean projection of the
logits onto the probability simplex, so that small logits get exactly 0.

One Function: the forward sorts along the axis to find the support and the
threshold ``tau``; the backward is the closed form of the projection's
Jacobian, ``g - mean(g over the support)`` on the support and 0 elsewhere,
instead of differentiating through the sort.

Keras 3.15's backends compute ``tau`` from the sum of the cumulative sums
over the support instead of the sum of the support's logits; their output
then does not sum to 1 whenever the support has more than one element
(``[0.1, 0.2, 0.3]`` gives ``[0, 0.067, 0.167]``). This follows the paper
Keras cites; it agrees with Keras whenever the support is a single entry.

Private to ``activations.sparsemax`` (the ``keras.ops.sparsemax`` name
belongs to the ops namespace, whose wrapper may call this Function).
"""
from minikeras.autograd import Function, Tensor

__all__ = []


class Sparsemax(Function):
    """Sparsemax along one axis; keeps only its output for backward. It sorts
    and scans, which CuPy 14 cannot do in bfloat16: 16-bit inputs run in float32."""

    half_in_float32 = True

    def __init__(self, axis):
        self.axis = axis

    def forward(self, x):
        xp = self.device.xp
        axis = self.axis
        ordered = -xp.sort(-x, axis)  # positional: cupy.ndarray.sort takes axis only so
        cumulative = ordered.cumsum(axis=axis)
        shape = [1] * x.ndim
        shape[axis] = -1
        ranks = xp.arange(1, x.shape[axis] + 1, dtype=x.dtype).reshape(shape)
        support = ordered - (cumulative - 1) / ranks > 0
        count = support.sum(axis=axis, keepdims=True)
        # tau from the sum of the k largest logits, k the support's size.
        top_sum = xp.take_along_axis(cumulative, count - 1, axis=axis)
        tau = (top_sum - 1) / count.astype(x.dtype)
        out = xp.maximum(x - tau, 0).astype(x.dtype)
        self.save_for_backward(out)
        return out

    def backward(self, grad):
        (out,) = self.saved
        support = (out > 0).astype(grad.dtype)
        count = support.sum(axis=self.axis, keepdims=True)
        mean = (grad * support).sum(axis=self.axis, keepdims=True) / count
        return support * (grad - mean)


def _sparsemax(x, axis=-1):
    """Sparsemax of a float Tensor along ``axis``."""
    if not isinstance(x, Tensor):
        x = Tensor(x)
    if x.ndim == 0:
        raise ValueError("sparsemax: the input needs at least one axis, received a scalar.")
    if not -x.ndim <= axis < x.ndim:
        raise ValueError(f"sparsemax: axis {axis} is out of range for an input of shape {tuple(x.shape)}.")
    return Sparsemax(axis % x.ndim).apply(x)
