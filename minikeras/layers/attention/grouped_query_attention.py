"""GroupedQueryAttention (Ainslie et al., 2023): several query heads share
each key/value head, shrinking the key/value projections and cache.

Weights, in Keras's order and shapes: ``query`` kernel ``(dim, query_heads,
head_dim)`` and bias ``(query_heads, head_dim)``, ``key`` and ``value`` the
same with ``key_value_heads``, ``gate`` (with ``use_gate``, between key and
value as Keras builds it), then ``attention_output`` kernel
``(query_heads, head_dim, dim)`` and bias ``(dim,)``.

The shared heads are never copied: queries are grouped as
``(batch, kv_heads, repeats, steps, head_dim)`` and the matmuls broadcast the
key/value heads over the repeats (Keras repeats them in memory).
"""
import math

from minikeras import ops
from minikeras.autograd import Tensor
from minikeras.layers.attention.attention_inputs import (check_dropout, check_feature_sizes, check_input_ranks,
                                                         resolve_inputs)
from minikeras.layers.attention.multi_head_attention import MultiHeadAttention, _positive
from minikeras.layers.base import _LAYER_CLASSES, Layer
from minikeras.layers.kernel_arguments import set_weight_arguments, weight_arguments_config
from minikeras.ops.nn.grouped_attention import _grouped_attention

__all__ = ["GroupedQueryAttention", "GroupQueryAttention"]

# Keras's dot_product_attention fills masked logits with -0.7 * float32 max:
# a fully masked row then attends uniformly (its masked-softmax path gives 0).
_LARGE_NEGATIVE = -0.7 * 3.38953e38


class GroupedQueryAttention(Layer):
    """Grouped-query attention over ``(batch, steps, features)`` inputs.

    Args:
        head_dim: the size of each head.
        num_query_heads: the number of query heads.
        num_key_value_heads: the number of key/value heads; must divide
            ``num_query_heads``.
        dropout: the rate of attention weights dropped in training.
        use_bias: biases on the projections (default True).
        sliding_window: None, or attend only to keys less than this many
            steps away.
        flash_attention: accepted for Keras compatibility (one path here).
        kernel_initializer, bias_initializer, kernel_regularizer,
        bias_regularizer, activity_regularizer, kernel_constraint,
        bias_constraint: as Dense.
        use_gate: multiply the attended values by ``sigmoid(gate(query))``.
        seed: recorded in the config.
        **kwargs: base Layer arguments.

    Call arguments as MultiHeadAttention's: ``query, value, key=None,
    query_mask, value_mask, key_mask, attention_mask,
    return_attention_scores, training, use_causal_mask``.
    """

    supports_masking = True

    def __init__(self, head_dim, num_query_heads, num_key_value_heads, dropout=0.0, use_bias=True,
                 sliding_window=None, flash_attention=None, kernel_initializer="glorot_uniform",
                 bias_initializer="zeros", kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 kernel_constraint=None, bias_constraint=None, use_gate=False, seed=None, **kwargs):
        super().__init__(**kwargs)
        name = "GroupedQueryAttention"
        self.head_dim = _positive(name, "head_dim", head_dim)
        self.num_query_heads = _positive(name, "num_query_heads", num_query_heads)
        self.num_key_value_heads = _positive(name, "num_key_value_heads", num_key_value_heads)
        if num_query_heads % num_key_value_heads != 0:
            raise ValueError("`num_query_heads` must be divisible by `num_key_value_heads`.")
        self.num_repeats = num_query_heads // num_key_value_heads
        self.dropout = check_dropout(name, dropout)
        self.use_bias, self.use_gate = bool(use_bias), bool(use_gate)
        if sliding_window is not None and (isinstance(sliding_window, bool) or not isinstance(sliding_window, int)
                                           or sliding_window <= 0):
            raise ValueError(f"`sliding_window` must be `None` or a positive integer. Received: "
                             f"sliding_window={sliding_window}")
        self.sliding_window = sliding_window
        set_weight_arguments(self, kernel_initializer, bias_initializer, kernel_regularizer, bias_regularizer,
                             activity_regularizer, kernel_constraint, bias_constraint)
        self.seed = seed
        self._feature_sizes = None

    def build(self, input_shape):
        """Weights are made on the first call, when every input's size is known."""
        self.built = True

    def _projection(self, name, in_size, heads, kernel_shape=None, bias_shape=None):
        kernel = self.add_weight(f"{name}/kernel", kernel_shape or (in_size, heads, self.head_dim),
                                 initializer=self.kernel_initializer, regularizer=self.kernel_regularizer,
                                 constraint=self.kernel_constraint)
        bias = None
        if self.use_bias:
            bias = self.add_weight(f"{name}/bias", bias_shape or (heads, self.head_dim),
                                   initializer=self.bias_initializer, regularizer=self.bias_regularizer,
                                   constraint=self.bias_constraint)
        return kernel, bias

    def _build_weights(self, query, value, key):
        check_input_ranks(self, "GroupedQueryAttention", query, value, key)
        dim = query.shape[-1]
        self.query_kernel, self.query_bias = self._projection("query", dim, self.num_query_heads)
        self.key_kernel, self.key_bias = self._projection("key", key.shape[-1], self.num_key_value_heads)
        if self.use_gate:
            self.gate_kernel, self.gate_bias = self._projection("gate", dim, self.num_query_heads)
        self.value_kernel, self.value_bias = self._projection("value", value.shape[-1], self.num_key_value_heads)
        self.output_kernel, self.output_bias = self._projection(
            "attention_output", None, None, (self.num_query_heads, self.head_dim, dim), (dim,))
        self._feature_sizes = (dim, value.shape[-1], key.shape[-1])

    def _project(self, inputs, kernel, bias):
        """(B, T, dim) -> (B, T, heads, head_dim)."""
        batch, steps, dim = inputs.shape
        heads = kernel.shape[1]
        # As one 2-D product: a (B, T, dim) @ (dim, n) matmul's kernel gradient is a batched product summed
        # afterwards, the flattened one a single GEMM.
        flat = ops.reshape(inputs, (batch * steps, dim))
        projected = ops.matmul(flat, ops.reshape(kernel, (dim, heads * self.head_dim)))
        projected = ops.reshape(projected, (batch, steps, heads, self.head_dim))
        return projected if bias is None else projected + bias

    def _keep_mask(self, query, value, key, query_mask, value_mask, key_mask, attention_mask, use_causal_mask):
        keep = MultiHeadAttention._attention_mask(self, query, value, key, query_mask, value_mask, key_mask,
                                                  attention_mask, use_causal_mask)
        if self.sliding_window is not None:
            device = query.device
            with device.activate():
                xp = device.xp
                distance = xp.abs(xp.arange(query.shape[1])[:, None] - xp.arange(value.shape[1])[None, :])
                window = Tensor((distance < self.sliding_window)[None], device=device)
            keep = window if keep is None else ops.logical_and(keep, window)
        return keep

    def call(self, query, value, key=None, query_mask=None, value_mask=None, key_mask=None, attention_mask=None,
             return_attention_scores=False, training=None, use_causal_mask=False):
        value, key, query_mask, value_mask, key_mask = resolve_inputs(self, query, value, key, query_mask,
                                                                      value_mask, key_mask)
        if self._feature_sizes is None:
            self._build_weights(query, value, key)
        else:
            check_feature_sizes(self, "GroupedQueryAttention", self._feature_sizes, query, value, key)
        keep = self._keep_mask(query, value, key, query_mask, value_mask, key_mask, attention_mask, use_causal_mask)
        batch, steps = query.shape[0], query.shape[1]
        kv_heads, repeats, head_dim = self.num_key_value_heads, self.num_repeats, self.head_dim
        queries = self._project(query, self.query_kernel, self.query_bias) * (1.0 / math.sqrt(head_dim))
        # (B, T, Hq, D) -> (B, Hkv, R, T, D): query head u uses key/value head u // R, as Keras's repeat.
        queries = ops.transpose(ops.reshape(queries, (batch, steps, kv_heads, repeats, head_dim)), (0, 2, 3, 1, 4))
        keys = ops.transpose(self._project(key, self.key_kernel, self.key_bias), (0, 2, 1, 3))  # (B, Hkv, S, D)
        values = ops.transpose(self._project(value, self.value_kernel, self.value_bias), (0, 2, 1, 3))
        masked_softmax = return_attention_scores or (training and self.dropout > 0)
        if keep is not None:
            keep = ops.expand_dims(ops.expand_dims(keep, 1), 1)  # (B, 1, 1, T, S)
        if not masked_softmax:
            # Keras's dot_product_attention path, as one op (a fully masked row attends uniformly).
            weights = None
            context = _grouped_attention(queries, keys, values, keep, _LARGE_NEGATIVE)
        else:
            keys, values = ops.expand_dims(keys, 2), ops.expand_dims(values, 2)
            scores = ops.matmul(queries, ops.swapaxes(keys, -2, -1))  # (B, Hkv, R, T, S)
            if keep is None:
                weights = ops.softmax(scores, axis=-1)
            else:  # Keras's Softmax(mask): masked weights are 0
                weights = ops.where(keep, ops.softmax(ops.where(keep, scores, -1.0e9), axis=-1), 0.0)
            attended = ops.dropout(weights, self.dropout) if training and self.dropout > 0 else weights
            context = ops.matmul(attended, values)  # (B, Hkv, R, T, D)
        context = ops.reshape(ops.transpose(context, (0, 3, 1, 2, 4)), (batch, steps, kv_heads * repeats, head_dim))
        if self.use_gate:
            context = context * ops.sigmoid(self._project(query, self.gate_kernel, self.gate_bias))
        merged = ops.reshape(context, (batch * steps, self.num_query_heads * head_dim))
        output = ops.matmul(merged, ops.reshape(self.output_kernel, (self.num_query_heads * head_dim, -1)))
        output = ops.reshape(output, (batch, steps, output.shape[-1]))
        if self.output_bias is not None:
            output = output + self.output_bias
        if self.activity_regularizer is not None:
            self.add_loss(self.activity_regularizer(output))
        if return_attention_scores:
            return output, ops.reshape(weights, (batch, self.num_query_heads, steps, value.shape[1]))
        return output

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)

    def get_config(self):
        return {
            **super().get_config(), "head_dim": self.head_dim, "num_query_heads": self.num_query_heads,
            "num_key_value_heads": self.num_key_value_heads, "use_bias": self.use_bias, "use_gate": self.use_gate,
            "sliding_window": self.sliding_window, "dropout": self.dropout,
            **weight_arguments_config(self),
            "seed": self.seed,
        }


GroupQueryAttention = GroupedQueryAttention
_LAYER_CLASSES.setdefault("GroupQueryAttention", GroupedQueryAttention)
