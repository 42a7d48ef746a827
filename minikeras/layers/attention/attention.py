"""Attention: dot-product (Luong) or additive-style "concat" attention over
``[query, value]`` or ``[query, value, key]`` (Keras's ``keras.layers.Attention``)."""
import numbers

from minikeras import ops
from minikeras.layers.base import Layer

__all__ = ["Attention"]

_LARGE = 1.0e9  # subtracted from masked scores, as Keras (exp underflows to 0)


def causal_mask(query_steps, value_steps):
    """``(1, T, S)`` bool: query step ``i`` may see value steps ``j <= i``."""
    rows = ops.reshape(ops.arange(query_steps), (1, query_steps, 1))
    columns = ops.reshape(ops.arange(value_steps), (1, 1, value_steps))
    return ops.greater_equal(rows, columns)


class Attention(Layer):
    """Dot-product attention: ``softmax(query @ key^T) @ value``.

    Args:
        use_scale: learn a scalar ``scale`` multiplying the scores.
        score_mode: "dot" (default) or "concat" (``sum(tanh(q + k))``,
            times a learned ``concat_score_weight``).
        dropout: rate of attention weights dropped in training.
        seed: recorded in the config (dropout draws from minikeras.random).
        **kwargs: base Layer arguments.

    Call arguments:
        inputs: ``[query (B, T, dim), value (B, S, dim)]`` or with ``key``
            (B, S, dim) third (default: value).
        mask: ``[query_mask (B, T), value_mask (B, S)]``, taken from the
            inputs' masks when not given; masked values get no weight and
            masked queries output zeros.
        training: enables dropout.
        return_attention_scores: also return the ``(B, T, S)`` weights.
        use_causal_mask: query step ``i`` sees only value steps ``<= i``.
    """

    supports_masking = True

    def __init__(self, use_scale=False, score_mode="dot", dropout=0.0, seed=None, **kwargs):
        super().__init__(**kwargs)
        if score_mode not in ("dot", "concat"):
            raise ValueError(f"Attention: score_mode must be 'dot' or 'concat', received score_mode={score_mode!r}.")
        if isinstance(dropout, bool) or not isinstance(dropout, numbers.Real) or not 0 <= dropout < 1:
            raise ValueError(f"Attention: dropout must be a number in [0, 1), received dropout={dropout!r}.")
        self.use_scale = bool(use_scale)
        self.score_mode = score_mode
        self.dropout = float(dropout)
        self.seed = seed
        self.scale = self.concat_score_weight = None

    def build(self, input_shape):
        self._check_inputs(input_shape)
        if self.use_scale:
            self.scale = self.add_weight("scale", (), initializer="ones")
        if self.score_mode == "concat":
            self.concat_score_weight = self.add_weight("concat_score_weight", (), initializer="ones")
        self.built = True

    def _check_inputs(self, shapes, mask=None):
        if not isinstance(shapes, (list, tuple)) or len(shapes) not in (2, 3) or \
                not all(isinstance(s, (list, tuple)) for s in shapes):
            raise ValueError(f"Layer '{self.name}' (Attention) expects inputs [query, value] or [query, value, key], "
                             f"received {shapes!r}.")
        if mask is not None and (not isinstance(mask, (list, tuple)) or len(mask) not in (2, 3)):
            raise ValueError(f"Layer '{self.name}' (Attention) expects mask [query_mask, value_mask], "
                             f"received {mask!r}.")

    def _scores(self, query, key):
        if self.score_mode == "dot":
            scores = ops.matmul(query, ops.swapaxes(key, -2, -1))
            return scores * self.scale if self.scale is not None else scores
        pairs = ops.expand_dims(query, -2) + ops.expand_dims(key, -3)
        if self.scale is not None:
            pairs = self.scale * pairs
        return self.concat_score_weight * ops.sum(ops.tanh(pairs), axis=-1)

    def call(self, inputs, mask=None, training=None, return_attention_scores=False, use_causal_mask=False):
        self._check_inputs([tuple(t.shape) for t in inputs], mask)
        inputs = [self._convert_input(t) for t in inputs]
        query, value = inputs[0], inputs[1]
        key = inputs[2] if len(inputs) > 2 else value
        query_mask = mask[0] if mask else None
        value_mask = mask[1] if mask else None
        scores = self._scores(query, key)
        keep = None if value_mask is None else ops.expand_dims(ops.not_equal(self._convert_input(value_mask), 0), -2)
        if use_causal_mask:
            causal = causal_mask(scores.shape[-2], scores.shape[-1])
            keep = causal if keep is None else ops.logical_and(keep, causal)
        if keep is not None:
            scores = ops.where(keep, scores, scores - _LARGE)
        weights = ops.softmax(scores, axis=-1)
        if training and self.dropout > 0:
            weights = ops.dropout(weights, self.dropout)
        output = ops.matmul(weights, value)
        if query_mask is not None:
            output = ops.where(ops.expand_dims(ops.not_equal(self._convert_input(query_mask), 0), -1), output, 0.0)
        return (output, weights) if return_attention_scores else output

    def compute_mask(self, inputs, previous_mask):
        if not previous_mask or previous_mask[0] is None:
            return None
        return previous_mask[0]

    def compute_output_shape(self, input_shape):
        query, value = input_shape[0], input_shape[1]
        return tuple(query[:-1]) + (value[-1],)

    def get_config(self):
        return {**super().get_config(), "use_scale": self.use_scale, "score_mode": self.score_mode,
                "dropout": self.dropout, "seed": self.seed}
