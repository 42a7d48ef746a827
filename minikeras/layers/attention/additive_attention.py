"""AdditiveAttention (Bahdanau et al., 2015): scores ``sum(scale * tanh(q + k))``."""
from minikeras import ops
from minikeras.layers.attention.attention import Attention

__all__ = ["AdditiveAttention"]


class AdditiveAttention(Attention):
    """Additive (Bahdanau-style) attention over ``[query, value]`` or
    ``[query, value, key]``, with Attention's masks, dropout and scores.

    Args:
        use_scale: learn a ``scale`` of the feature size (glorot_uniform),
            multiplying ``tanh(q + k)`` before the sum (default True).
        dropout: the rate of attention weights dropped in training.
        **kwargs: base Layer arguments (and Attention's ``seed``).
    """

    def __init__(self, use_scale=True, dropout=0.0, **kwargs):
        super().__init__(use_scale=use_scale, score_mode="concat", dropout=dropout, **kwargs)

    def build(self, input_shape):
        self._check_inputs(input_shape)
        self.scale = None
        if self.use_scale:
            self.scale = self.add_weight("scale", (input_shape[0][-1],), initializer="glorot_uniform")
        self.built = True

    def _scores(self, query, key):
        pairs = ops.tanh(ops.expand_dims(query, -2) + ops.expand_dims(key, -3))
        return ops.sum(pairs * self.scale if self.scale is not None else pairs, axis=-1)

    def get_config(self):
        config = super().get_config()
        del config["score_mode"]
        return config
