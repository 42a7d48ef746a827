"""Scaled dot-product attention with grouped key/value heads, as one op.

Inputs are queries ``(B, G, R, T, D)`` (already scaled), keys and values
``(B, G, S, D)``: ``R`` query heads share each of the ``G`` key/value heads.
The forward copies its operands to contiguous memory once and runs the two
batched products on BLAS (a matmul over transposed views falls back to
NumPy's slow loop), broadcasting the shared heads instead of repeating
them; the backward is the closed form of softmax attention, summing the
shared heads' gradients over ``R``.

Private to ``layers.GroupedQueryAttention`` (``keras.ops.dot_product_attention``
belongs to the ops namespace).
"""
from minikeras.autograd import Function

__all__ = []


class GroupedAttention(Function):
    """``softmax(where(keep, q k^T, fill)) v`` per group; ``keep`` broadcasts
    to ``(B, G, R, T, S)`` (or is None)."""

    def __init__(self, fill):
        self.fill = fill

    def forward(self, query, key, value, keep=None):
        xp = self.device.xp
        batch, groups, repeats, steps, depth = query.shape
        # The R heads sharing a key/value head are stacked along the steps:
        # one (R*T, D) x (D, S) product per group, no broadcast, no copy of K/V.
        query = xp.ascontiguousarray(query).reshape(batch, groups, repeats * steps, depth)
        key, value = xp.ascontiguousarray(key), xp.ascontiguousarray(value)
        scores = query @ xp.swapaxes(key, -1, -2)
        if keep is not None:
            grouped = scores.reshape(batch, groups, repeats, steps, -1)
            scores = xp.where(keep, grouped, grouped.dtype.type(self.fill)).reshape(scores.shape)
        scores -= scores.max(axis=-1, keepdims=True)
        weights = xp.exp(scores, out=scores)
        weights /= weights.sum(axis=-1, keepdims=True)
        self.save_for_backward(query, key, value, weights)
        return (weights @ value).reshape(batch, groups, repeats, steps, depth)

    def backward(self, grad):
        query, key, value, weights = self.saved
        xp = self.device.xp
        shape = grad.shape
        grad = xp.ascontiguousarray(grad).reshape(query.shape)
        grad_weights = grad @ xp.swapaxes(value, -1, -2)
        grad_value = xp.swapaxes(weights, -1, -2) @ grad
        grad_weights -= (grad_weights * weights).sum(axis=-1, keepdims=True)
        grad_scores = grad_weights * weights
        grad_query = (grad_scores @ key).reshape(shape)
        grad_key = xp.swapaxes(grad_scores, -1, -2) @ query
        return grad_query, grad_key, grad_value, None


def _grouped_attention(query, key, value, keep=None, fill=-0.7 * 3.38953e38):
    """The attended values ``(B, G, R, T, D)`` (see the module docstring)."""
    if keep is None:
        return GroupedAttention(fill).apply(query, key, value)
    return GroupedAttention(fill).apply(query, key, value, keep)
