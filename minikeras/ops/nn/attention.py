"""Scaled dot-product attention as one fused op: ``dot_product_attention``.

Layout is Keras's: query ``(B, T, N, H)``, key and value ``(B, S, K, H)``
with ``N`` a multiple of ``K`` (grouped-query attention: each key/value head
serves ``N / K`` query heads). One Function computes scores, bias, the soft
cap, the mask and the softmax inside its forward, and backward computes the
four gradients from the saved probabilities, so no intermediate op of the
chain is recorded or kept.

Masked positions get ``-0.7 * finfo.max`` before the softmax (as Keras's JAX
backend), so a fully masked row attends uniformly rather than giving NaN.
"""

__all__ = ["dot_product_attention"]

import math

import numpy

from minikeras.autograd import Function
from minikeras.backend.dtypes import finfo, is_float_dtype
from minikeras.ops._promotion import result_type
from minikeras.ops.math._elementwise import detached, operand
from minikeras.ops.math._operands import _as_tensor
from minikeras._support.argument_validation import validate_flag, validate_number


def _batched_matmul(device, a, b):
    """``a @ b`` for stacks of matrices: on the CPU one product per op thread
    (NumPy's batched matmul runs them one after another on one core), on a
    GPU one ``cublasGemmStridedBatchedEx`` (``device.matmul``, which a CUDA
    graph capture takes)."""
    if device.host_kernels and a.shape[0] > 1:
        return device.xp.stack(device.matmul_all(list(zip(a, b))))
    return device.matmul(a, b)


class DotProductAttention(Function):
    """Heads are laid out as ``(B*K, G*T, H)`` stacks (``G`` query heads per key
    head share its keys), so scores and outputs are batched 2-D products.
    16-bit inputs are computed in float32 (as JAX's attention accumulates the
    scores and softmax in float32): NumPy has no 16-bit BLAS, and bfloat16's
    in-place softmax would round every step."""

    half_in_float32 = True

    def __init__(self, scale, is_causal, soft_cap, has_bias, has_mask, groups):
        self.scale, self.is_causal, self.soft_cap = scale, is_causal, soft_cap
        self.has_bias, self.has_mask, self.groups = has_bias, has_mask, groups

    def forward(self, query, key, value, *extras):
        xp = self.device.xp
        extras = list(extras)
        bias = extras.pop(0) if self.has_bias else None
        mask = extras.pop(0) if self.has_mask else None
        b, t, n, h = query.shape
        s, k, hv = key.shape[1], key.shape[2], value.shape[3]
        g = self.groups
        q = xp.ascontiguousarray(query.reshape(b, t, k, g, h).transpose(0, 2, 3, 1, 4)).reshape(b * k, g * t, h)
        keys = xp.ascontiguousarray(key.transpose(0, 2, 1, 3)).reshape(b * k, s, h)
        values = xp.ascontiguousarray(value.transpose(0, 2, 1, 3)).reshape(b * k, s, hv)
        logits = _batched_matmul(self.device, q, keys.transpose(0, 2, 1))
        logits *= self.scale
        grid = logits.reshape(b, k, g, t, s)  # a view: head n = k * G + g
        if bias is not None:
            grid += xp.broadcast_to(bias, (b, n, t, s)).reshape(b, k, g, t, s)
        capped = None
        if self.soft_cap is not None:
            capped = xp.tanh(grid / self.soft_cap)
            grid[...] = capped * self.soft_cap
        keep = None
        if mask is not None:
            keep = xp.broadcast_to(mask.astype(bool), (b, n, t, s)).reshape(b, k, g, t, s)
        if self.is_causal:
            causal = xp.tril(xp.ones((t, s), dtype=bool))
            keep = causal if keep is None else keep & causal
        if keep is not None:
            grid[...] = xp.where(keep, grid, grid.dtype.type(-0.7 * float(finfo(grid.dtype).max)))
        logits -= logits.max(axis=-1, keepdims=True)
        probabilities = xp.exp(logits, out=logits)
        probabilities /= probabilities.sum(axis=-1, keepdims=True)
        out = _batched_matmul(self.device, probabilities, values)  # (B*K, G*T, Hv)
        if any(self.needs_input_grad):
            self.save_for_backward(q, keys, values, probabilities, capped, keep)
        self.shapes = (b, t, n, h, s, k, hv)
        return out.reshape(b, k, g, t, hv).transpose(0, 3, 1, 2, 4).reshape(b, t, n, hv)

    def backward(self, grad):
        q, keys, values, probabilities, capped, keep = self.saved
        b, t, n, h, s, k, hv = self.shapes
        g = self.groups
        xp = self.device.xp
        grad_out = xp.ascontiguousarray(grad.reshape(b, t, k, g, hv).transpose(0, 2, 3, 1, 4)).reshape(b * k, g * t, hv)
        grad_values = _batched_matmul(self.device, probabilities.transpose(0, 2, 1), grad_out)  # (B*K, S, Hv)
        grad_logits = _batched_matmul(self.device, grad_out, values.transpose(0, 2, 1))  # dP
        grad_logits -= (grad_logits * probabilities).sum(axis=-1, keepdims=True)
        grad_logits *= probabilities
        grid = grad_logits.reshape(b, k, g, t, s)
        if keep is not None:
            grid *= keep
        if capped is not None:
            grid *= 1 - capped * capped
        grad_bias = grid.reshape(b, n, t, s).copy() if self.has_bias else None
        grad_query = _batched_matmul(self.device, grad_logits, keys)
        grad_query *= self.scale
        grad_keys = _batched_matmul(self.device, grad_logits.transpose(0, 2, 1), q)
        grad_keys *= self.scale
        grads = [
            grad_query.reshape(b, k, g, t, h).transpose(0, 3, 1, 2, 4).reshape(b, t, n, h),
            grad_keys.reshape(b, k, s, h).transpose(0, 2, 1, 3),
            grad_values.reshape(b, k, s, hv).transpose(0, 2, 1, 3),
        ]
        if self.has_bias:
            grads.append(grad_bias)
        if self.has_mask:
            grads.append(None)
        return tuple(grads)


def dot_product_attention(query, key, value, bias=None, mask=None, scale=None, is_causal=False,
                          flash_attention=None, attn_logits_soft_cap=None):
    """``softmax(query . key / sqrt(H) + bias, masked) . value`` per head, fused.

    Args:
        query: ``(B, T, N, H)`` (or ``(T, N, H)`` without batch).
        key: ``(B, S, K, H)``; ``N`` must be a multiple of ``K``.
        value: ``(B, S, K, Hv)``: its head size may differ from the query's (as Keras's backends).
        bias: added to the scores, broadcastable to ``(B, N, T, S)``.
        mask: bool, broadcastable to ``(B, N, T, S)``; False positions are excluded.
        scale: the score scale (default ``1 / sqrt(H)``).
        is_causal: also exclude keys after each query position.
        flash_attention: None or False; True is refused (no flash kernel here).
        attn_logits_soft_cap: if set, scores become ``cap * tanh(scores / cap)``.

    Returns:
        ``(B, T, N, Hv)``, in the dtype the three inputs promote to (Keras's ``result_type``;
        float32 for integers and bools).
    """
    if flash_attention is not None and validate_flag("dot_product_attention", "flash_attention", flash_attention):
        raise ValueError("dot_product_attention: flash_attention=True is not available in minikeras "
                         "(the fused op is its own kernel); pass None or False.")
    tensors = [_as_tensor("dot_product_attention", operand("dot_product_attention", v)) for v in (query, key, value)]
    unbatched = tensors[0].ndim == 3
    if unbatched:
        tensors = [t.reshape((1,) + t.shape) for t in tensors]
    q, k, v = tensors
    if q.ndim != 4 or k.ndim != 4 or v.ndim != 4 or k.shape[:3] != v.shape[:3] or q.shape[0] != k.shape[0] \
            or q.shape[3] != k.shape[3]:
        raise ValueError(f"dot_product_attention expects query (B, T, N, H), key (B, S, K, H) and value "
                         f"(B, S, K, Hv), received {q.shape}, {k.shape}, {v.shape}.")
    if q.shape[2] % k.shape[2]:
        raise ValueError(f"dot_product_attention: query heads ({q.shape[2]}) must be a multiple of key heads "
                         f"({k.shape[2]}).")
    dtype = result_type(q, k, v)  # Keras's compute dtype (a float32 key makes a float16 query's output float32)
    dtype = dtype if is_float_dtype(dtype) else numpy.dtype("float32")
    q, k, v = (t if t.dtype == dtype else t.astype(dtype) for t in (q, k, v))
    scale = 1.0 / math.sqrt(q.shape[-1]) if scale is None else validate_number("dot_product_attention", "scale", scale)
    extras = []
    target = (q.shape[0], q.shape[2], q.shape[1], k.shape[1])
    for name, extra in (("bias", bias), ("mask", mask)):
        if extra is None:
            continue
        extra = _as_tensor("dot_product_attention", operand("dot_product_attention", extra))
        if unbatched and extra.ndim == 3:
            extra = extra.reshape((1,) + extra.shape)
        try:
            numpy.broadcast_shapes(extra.shape, target)
        except ValueError:
            raise ValueError(f"dot_product_attention: {name} of shape {extra.shape} does not broadcast to "
                             f"(B, N, T, S) = {target}.") from None
        extras.append(detached(extra) if name == "mask" else (extra if extra.dtype == dtype else extra.astype(dtype)))
    soft_cap = None if attn_logits_soft_cap is None else validate_number(
        "dot_product_attention", "attn_logits_soft_cap", attn_logits_soft_cap, minimum=math.ulp(0.0))
    is_causal = validate_flag("dot_product_attention", "is_causal", is_causal)
    out = DotProductAttention(scale, is_causal, soft_cap, bias is not None, mask is not None,
                              q.shape[2] // k.shape[2]).apply(q, k, v, *extras)
    return out.reshape(out.shape[1:]) if unbatched else out
