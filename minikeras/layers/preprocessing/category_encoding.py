"""keras.layers.CategoryEncoding."""
import numpy

from minikeras.autograd import Tensor
from minikeras.layers.base import Layer
from minikeras.layers.preprocessing.categorical_encoding import encode_categorical
from minikeras.layers.preprocessing.index_lookup import host_tokens

__all__ = ["CategoryEncoding"]

_ENCODINGS = ("one_hot", "multi_hot", "count")


class CategoryEncoding(Layer):
    """Integer ids to one-hot, multi-hot or count vectors.

    Args:
        num_tokens: the number of ids (the output's last size).
        output_mode: "multi_hot" (default; "binary" is its old name),
            "one_hot" or "count".
        sparse: only False (dense outputs).
        **kwargs: base Layer arguments.

    Call arguments:
        inputs: integer ids.
        count_weights: weights of the ids, for ``output_mode="count"``.
    """

    def __init__(self, num_tokens=None, output_mode="multi_hot", sparse=False, **kwargs):
        super().__init__(**kwargs)
        if output_mode == "binary":
            output_mode = "multi_hot"
        if output_mode not in _ENCODINGS:
            raise ValueError(f"Unknown arg for output_mode: {output_mode}")
        if num_tokens is None:
            raise ValueError("num_tokens must be set to use this layer. If the number of tokens is not known "
                             "beforehand, use the IntegerLookup layer instead.")
        if num_tokens < 1:
            raise ValueError(f"`num_tokens` must be >= 1. Received: num_tokens={num_tokens}.")
        if sparse:
            raise ValueError("CategoryEncoding: sparse=True is not supported; minikeras tensors are dense.")
        self.num_tokens, self.output_mode, self.sparse = num_tokens, output_mode, sparse

    def call(self, inputs, count_weights=None):
        if count_weights is not None:
            if self.output_mode != "count":
                raise ValueError(f"`count_weights` is not used when `output_mode` is not `'count'`. Received "
                                 f"`count_weights={count_weights}`.")
            count_weights = host_tokens(count_weights)
        ids = numpy.asarray(host_tokens(inputs))
        if ids.dtype.kind not in "iuf":
            raise TypeError(f"Layer '{self.name}' (CategoryEncoding) expects integer ids, received dtype {ids.dtype}.")
        return Tensor(encode_categorical(ids.astype(numpy.int64), self.output_mode, self.num_tokens, count_weights,
                                         self.dtype))

    def compute_output_shape(self, input_shape):
        if input_shape is not None and len(input_shape) == 0:
            return (self.num_tokens,)
        if self.output_mode == "one_hot" and (input_shape[-1] != 1 or len(input_shape) == 1):
            return tuple(input_shape) + (self.num_tokens,)
        return tuple(input_shape[:-1]) + (self.num_tokens,)

    def get_config(self):
        return {**super().get_config(), "num_tokens": self.num_tokens, "output_mode": self.output_mode}
