"""ReversibleEmbedding: an Embedding that can also map hidden vectors back to
token logits, with its own weights transposed (tied) or a separate matrix,
as language models' input and output layers share them."""
from minikeras import ops
from minikeras.layers.core.embedding import Embedding

__all__ = ["ReversibleEmbedding"]


class ReversibleEmbedding(Embedding):
    """``layer(ids)`` embeds; ``layer(hidden, reverse=True)`` returns logits
    ``hidden @ embeddings.T`` (``tie_weights=True``) or ``hidden @
    reverse_embeddings``.

    Args:
        input_dim, output_dim, embeddings_initializer, embeddings_regularizer,
        embeddings_constraint, mask_zero: as Embedding.
        activity_regularizer: as Embedding; quantization_config: only None.
        tie_weights: reuse the embeddings for the reverse projection (default
            True); otherwise a ``reverse_embeddings`` weight ``(output_dim,
            input_dim)``, initialized like the embeddings.
        reverse_dtype: compute the reverse projection in this dtype.
        logit_soft_cap: if set, logits become ``tanh(logits / cap) * cap``.
        **kwargs: base Layer arguments.
    """

    def __init__(self, input_dim, output_dim, tie_weights=True, embeddings_initializer="uniform",
                 embeddings_regularizer=None, embeddings_constraint=None, mask_zero=False, reverse_dtype=None,
                 logit_soft_cap=None, activity_regularizer=None, quantization_config=None, **kwargs):
        super().__init__(input_dim, output_dim, embeddings_initializer=embeddings_initializer,
                         embeddings_regularizer=embeddings_regularizer, embeddings_constraint=embeddings_constraint,
                         mask_zero=mask_zero, activity_regularizer=activity_regularizer, **kwargs)
        if quantization_config is not None:
            raise ValueError("ReversibleEmbedding: quantization is not implemented in minikeras.")
        self.tie_weights, self.reverse_dtype, self.logit_soft_cap = tie_weights, reverse_dtype, logit_soft_cap
        self.reverse_embeddings = None

    def build(self, input_shape=None):
        super().build(input_shape)
        if not self.tie_weights:
            self.reverse_embeddings = self.add_weight("reverse_embeddings", (self.output_dim, self.input_dim),
                                                      initializer=self.embeddings_initializer)
        self.built = True

    def call(self, inputs, reverse=False):
        if not reverse:
            return super().call(inputs)
        if inputs.shape[-1] != self.output_dim:
            raise ValueError(f"Layer '{self.name}' (ReversibleEmbedding, reverse=True) expects inputs whose last axis "
                             f"is output_dim={self.output_dim}, received shape {tuple(inputs.shape)}.")
        kernel = ops.transpose(self.embeddings) if self.tie_weights else self.reverse_embeddings
        if self.reverse_dtype is not None:
            inputs, kernel = ops.cast(inputs, self.reverse_dtype), ops.cast(kernel, self.reverse_dtype)
        flat = ops.reshape(inputs, (-1, self.output_dim))
        logits = ops.reshape(ops.matmul(flat, kernel), tuple(inputs.shape[:-1]) + (self.input_dim,))
        if self.logit_soft_cap is not None:
            logits = ops.tanh(logits / self.logit_soft_cap) * self.logit_soft_cap
        return logits

    def compute_mask(self, inputs, mask=None):
        """The padding mask of ids (forward); none for the reverse projection's float inputs."""
        if getattr(inputs, "dtype", None) is not None and inputs.dtype.kind == "f":
            return None
        return super().compute_mask(inputs, mask)

    def compute_output_shape(self, input_shape, reverse=False):
        if reverse:
            return tuple(input_shape[:-1]) + (self.input_dim,)
        return tuple(input_shape) + (self.output_dim,)

    def get_config(self):
        return {**super().get_config(), "tie_weights": self.tie_weights, "reverse_dtype": self.reverse_dtype,
                "logit_soft_cap": self.logit_soft_cap, "quantization_config": None}
