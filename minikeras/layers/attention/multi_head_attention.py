"""MultiHeadAttention (Vaswani et al. 2017), with Keras 3's arguments,
weights and masking rules, for ``(batch, steps, features)`` inputs.

Weights, in Keras's order and shapes: ``query/kernel (dim, heads,
key_dim)``, ``query/bias (heads, key_dim)``, the same for ``key`` and
``value`` (``value_dim``), then ``attention_output/kernel (heads,
value_dim, out)`` and ``attention_output/bias (out,)``. The math composes
``minikeras.ops`` (matmul, softmax, where, dropout); autograd
differentiates it.
"""
import math

from minikeras import ops
from minikeras.layers.attention.attention import causal_mask
from minikeras.layers.attention.attention_inputs import (check_dropout, check_feature_sizes, check_input_ranks,
                                                         resolve_inputs)
from minikeras.layers.base import Layer
from minikeras.layers.kernel_arguments import set_weight_arguments, weight_arguments_config

__all__ = ["MultiHeadAttention"]


def _positive(layer_name, argument, value, allow_none=False):
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ValueError(f"{layer_name}: {argument} must be a positive int, received {argument}={value!r}.")
    return value


class MultiHeadAttention(Layer):
    """Multi-head scaled dot-product attention.

    Args:
        num_heads: number of attention heads.
        key_dim: size of each head for query and key.
        value_dim: size of each head for value (default ``key_dim``).
        dropout: rate of attention weights dropped in training.
        use_bias: biases on the four projections (default True).
        output_shape: the output's last size (default: the query's).
        attention_axes: only None (attend over the steps axis).
        kernel_initializer, bias_initializer, kernel_regularizer,
            bias_regularizer, activity_regularizer, kernel_constraint,
            bias_constraint: as Dense.
        seed: recorded in the config (dropout draws from minikeras.random).
        **kwargs: base Layer arguments.

    Call arguments:
        query: ``(B, T, dim)``; value: ``(B, S, dim)``; key: default value.
        attention_mask: optional ``(B, T, S)`` bool, True = may attend.
        query_mask, value_mask, key_mask: ``(B, T)``/``(B, S)`` masks, by
            default the inputs' own (Embedding(mask_zero=True), Masking).
        return_attention_scores: also return ``(B, heads, T, S)`` weights.
        training: enables dropout.
        use_causal_mask: step ``i`` attends only to steps ``<= i``.

    Example:
        >>> mha = MultiHeadAttention(num_heads=2, key_dim=16)
        >>> mha(x, x).shape  # self-attention, x (batch, steps, dim)
    """

    supports_masking = True

    def __init__(self, num_heads, key_dim, value_dim=None, dropout=0.0, use_bias=True, output_shape=None,
                 attention_axes=None, kernel_initializer="glorot_uniform", bias_initializer="zeros",
                 kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None, kernel_constraint=None,
                 bias_constraint=None, seed=None, **kwargs):
        kwargs.pop("flash_attention", None)  # Keras 3 switch for fused kernels; one path here
        super().__init__(**kwargs)
        self.num_heads = _positive("MultiHeadAttention", "num_heads", num_heads)
        self.key_dim = _positive("MultiHeadAttention", "key_dim", key_dim)
        self.value_dim = _positive("MultiHeadAttention", "value_dim", value_dim, allow_none=True) or self.key_dim
        self.dropout = check_dropout("MultiHeadAttention", dropout)
        self.use_bias = bool(use_bias)
        if isinstance(output_shape, (list, tuple)):
            if len(output_shape) != 1:
                raise ValueError(f"MultiHeadAttention: only a 1-D output_shape is supported, received "
                                 f"{output_shape!r}.")
            output_shape = output_shape[0]
        self._output_size = _positive("MultiHeadAttention", "output_shape", output_shape, allow_none=True)
        if attention_axes is not None and tuple(attention_axes if isinstance(attention_axes, (list, tuple))
                                                else (attention_axes,)) not in ((1,), (-2,)):
            raise ValueError(f"MultiHeadAttention: attention over axes {attention_axes!r} is not supported; "
                             "only the steps axis (attention_axes=None) is.")
        self.attention_axes = None
        set_weight_arguments(self, kernel_initializer, bias_initializer, kernel_regularizer, bias_regularizer,
                             activity_regularizer, kernel_constraint, bias_constraint)
        self.seed = seed
        self._projections = None

    # ------------------------------------------------------------ weights
    def build(self, input_shape):
        """Weights are made on the first call, when value's and key's
        feature sizes are known too."""
        self.built = True

    def _projection(self, name, in_size, head_size):
        kernel = self.add_weight(f"{name}/kernel", (in_size, self.num_heads, head_size),
                                 initializer=self.kernel_initializer, regularizer=self.kernel_regularizer,
                                 constraint=self.kernel_constraint)
        bias = None
        if self.use_bias:
            bias = self.add_weight(f"{name}/bias", (self.num_heads, head_size), initializer=self.bias_initializer,
                                   regularizer=self.bias_regularizer, constraint=self.bias_constraint)
        return kernel, bias

    def _build_weights(self, query, value, key):
        check_input_ranks(self, "MultiHeadAttention", query, value, key)
        self.query_kernel, self.query_bias = self._projection("query", query.shape[-1], self.key_dim)
        self.key_kernel, self.key_bias = self._projection("key", key.shape[-1], self.key_dim)
        self.value_kernel, self.value_bias = self._projection("value", value.shape[-1], self.value_dim)
        out = self._output_size or query.shape[-1]
        self.output_kernel = self.add_weight("attention_output/kernel", (self.num_heads, self.value_dim, out),
                                             initializer=self.kernel_initializer,
                                             regularizer=self.kernel_regularizer, constraint=self.kernel_constraint)
        self.output_bias = None
        if self.use_bias:
            self.output_bias = self.add_weight("attention_output/bias", (out,), initializer=self.bias_initializer,
                                               regularizer=self.bias_regularizer, constraint=self.bias_constraint)
        self._projections = (query.shape[-1], value.shape[-1], key.shape[-1])

    def _heads(self, inputs, kernel, bias):
        """(B, T, dim) -> (B, heads, T, head_size)."""
        batch, steps, dim = inputs.shape
        head_size = kernel.shape[-1]
        projected = ops.matmul(inputs, ops.reshape(kernel, (dim, self.num_heads * head_size)))
        projected = ops.reshape(projected, (batch, steps, self.num_heads, head_size))
        if bias is not None:
            projected = projected + bias
        return ops.transpose(projected, (0, 2, 1, 3))

    # --------------------------------------------------------------- call
    def _attention_mask(self, query, value, key, query_mask, value_mask, key_mask, attention_mask,
                        use_causal_mask):
        keep = None

        def combine(current, extra):
            extra = ops.not_equal(self._convert_input(extra), 0) if extra.dtype.kind != "b" else extra
            return extra if current is None else ops.logical_and(current, extra)

        if query_mask is not None:
            keep = combine(keep, ops.expand_dims(self._convert_input(query_mask), -1))
        if value_mask is not None:
            keep = combine(keep, ops.expand_dims(self._convert_input(value_mask), -2))
        if key_mask is not None:
            keep = combine(keep, ops.expand_dims(self._convert_input(key_mask), -2))
        if use_causal_mask:
            keep = combine(keep, causal_mask(query.shape[1], value.shape[1]))
        if attention_mask is not None:
            attention_mask = self._convert_input(attention_mask)
            expected = (query.shape[0], query.shape[1], value.shape[1])
            if tuple(attention_mask.shape)[-2:] != expected[-2:]:
                raise ValueError(f"Layer '{self.name}' (MultiHeadAttention) expects attention_mask of shape "
                                 f"(batch, T, S) = {expected}, received shape {tuple(attention_mask.shape)}.")
            keep = combine(keep, attention_mask)
        return keep

    def call(self, query, value, key=None, query_mask=None, value_mask=None, key_mask=None, attention_mask=None,
             return_attention_scores=False, training=None, use_causal_mask=False):
        value, key, query_mask, value_mask, key_mask = resolve_inputs(self, query, value, key, query_mask,
                                                                      value_mask, key_mask)
        if self._projections is None:
            self._build_weights(query, value, key)
        else:
            check_feature_sizes(self, "MultiHeadAttention", self._projections, query, value, key)
        keep = self._attention_mask(query, value, key, query_mask, value_mask, key_mask, attention_mask,
                                    use_causal_mask)
        queries = self._heads(query, self.query_kernel, self.query_bias)
        keys = self._heads(key, self.key_kernel, self.key_bias)
        values = self._heads(value, self.value_kernel, self.value_bias)
        scale = 1.0 / math.sqrt(self.key_dim)
        # Keras takes its fused path (ops.dot_product_attention) unless it must
        # return the scores or apply dropout: the scores are scaled and
        # soft-maxed in float32 at least, then cast back to the compute dtype.
        fused = not return_attention_scores and not (training and self.dropout > 0)
        if fused:
            scores = ops.matmul(queries, ops.swapaxes(keys, -2, -1))  # (B, heads, T, S)
            if scores.dtype.itemsize < 4:
                scores = ops.cast(scores, "float32")
            scores = scores * scale
        else:
            scores = ops.matmul(queries * scale, ops.swapaxes(keys, -2, -1))
        if keep is not None:
            keep = ops.expand_dims(keep, 1)  # one mask for every head
            # As Keras's masked Softmax: masked scores -> -1e9, masked weights -> 0.
            weights = ops.where(keep, ops.softmax(ops.where(keep, scores, -1.0e9), axis=-1), 0.0)
        else:
            weights = ops.softmax(scores, axis=-1)
        if weights.dtype != values.dtype:
            weights = ops.cast(weights, values.dtype)
        attended = ops.dropout(weights, self.dropout) if training and self.dropout > 0 else weights
        context = ops.transpose(ops.matmul(attended, values), (0, 2, 1, 3))  # (B, T, heads, value_dim)
        batch, steps = context.shape[0], context.shape[1]
        merged = ops.reshape(context, (batch, steps, self.num_heads * self.value_dim))
        output = ops.matmul(merged, ops.reshape(self.output_kernel, (self.num_heads * self.value_dim, -1)))
        if self.output_bias is not None:
            output = output + self.output_bias
        return (output, weights) if return_attention_scores else output

    def compute_output_shape(self, input_shape):
        return tuple(input_shape[:-1]) + (self._output_size or input_shape[-1],)

    def get_config(self):
        return {
            **super().get_config(),
            "num_heads": self.num_heads,
            "key_dim": self.key_dim,
            "value_dim": self.value_dim,
            "dropout": self.dropout,
            "use_bias": self.use_bias,
            "output_shape": self._output_size,
            "attention_axes": self.attention_axes,
            **weight_arguments_config(self),
            "seed": self.seed,
        }
