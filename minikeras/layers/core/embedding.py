"""Embedding: integer ids to dense vectors, by looking up rows of a table."""
import numpy

from minikeras import constraints, initializers, ops, regularizers
from minikeras.backend.dtypes import is_float_dtype
from minikeras.layers.base import Layer
from minikeras.layers.core.dense import _add_activity_loss
from minikeras.layers.core.quantized_embedding import EmbeddingQuantization
from minikeras.layers.core.quantized_weights import config_with_policy, read_quantization_config
from minikeras.ops.nn.embedding import Embedding as EmbeddingFunction
from minikeras._support import deferred_checks

__all__ = ["Embedding"]


class Embedding(EmbeddingQuantization, Layer):
    """Turn integer ids into dense vectors: ``(batch, ...)`` ids give
    ``(batch, ..., output_dim)`` vectors (rows of the ``embeddings`` table).

    Args:
        input_dim: the vocabulary size; ids must lie in ``[0, input_dim)``.
        output_dim: the size of each vector.
        embeddings_initializer: default "uniform" (``RandomUniform(-0.05,
            0.05)``, as Keras).
        embeddings_regularizer: optional penalty on the table.
        activity_regularizer: optional penalty on the output.
        embeddings_constraint: optional projection of the table after
            each update.
        mask_zero: when True, id 0 is padding: ``compute_mask`` marks it
            False (and ``input_dim`` should count it).
        input_length: accepted for compatibility and ignored (as Keras 3).
        quantization_config: a ``quantizers.QuantizationConfig`` for
            ``quantize("int8" | "int4")`` or a quantized dtype policy
            (layers/core/quantized_embedding.py).
        **kwargs: base Layer arguments.

    Raises:
        ValueError: on call, an id outside ``[0, input_dim)`` (the message
            names the layer, ``input_dim`` and the id).

    Example:
        >>> layer = Embedding(1000, 64)
        >>> layer(np.array([[4, 20, 7]])).shape
        (1, 3, 64)
    """

    def __init__(self, input_dim, output_dim, embeddings_initializer="uniform", embeddings_regularizer=None,
                 activity_regularizer=None, embeddings_constraint=None, mask_zero=False, input_length=None,
                 quantization_config=None, **kwargs):
        super().__init__(**kwargs)
        self.quantization_config = read_quantization_config(quantization_config)
        for argument, value in (("input_dim", input_dim), ("output_dim", output_dim)):
            if isinstance(value, bool) or not isinstance(value, (int, numpy.integer)) or value <= 0:
                raise ValueError(f"Embedding: {argument} must be a positive integer, received {argument}={value!r}.")
        self.input_dim, self.output_dim = int(input_dim), int(output_dim)
        self.embeddings_initializer = initializers.get(embeddings_initializer)
        self.embeddings_regularizer = regularizers.get(embeddings_regularizer)
        self.activity_regularizer = regularizers.get(activity_regularizer)
        self.embeddings_constraint = constraints.get(embeddings_constraint)
        self.mask_zero = bool(mask_zero)
        self.input_length = input_length
        self.embeddings = None

    def build(self, input_shape=None):
        self._build_table()  # quantized under a quantized dtype policy (layers/core/quantized_embedding.py)
        self.built = True

    def _indices(self, inputs):
        """The ids as an integer array on the input's device, range-checked."""
        data, device = inputs.data, inputs.device
        floats = is_float_dtype(data.dtype)
        if data.dtype.kind not in "iu" and not floats:
            raise TypeError(f"Layer '{self.name}' expects integer ids, received dtype {data.dtype}.")
        if floats:
            with device.activate():
                data = data.astype(numpy.int64)  # Keras casts float ids (truncating)
        if data.size and deferred_checks.active() and not device.host_kernels:
            # In a GPU training or test step, checked at the next read of the
            # logs (_support/deferred_checks.py): reading the ids back would stop
            # each step (and refuse a captured one) for a host sync.
            deferred_checks.defer_label_range(self.name, device, data, self.input_dim, self._range_message)
        elif data.size:
            low, high = device.bounds(data)  # one transfer for both bounds
            if low < 0 or high >= self.input_dim:
                raise ValueError(self._range_message(self.input_dim, low if low < 0 else high) + ".")
        return data

    def _range_message(self, input_dim, bad):
        return (f"Layer '{self.name}' (Embedding with input_dim={input_dim}) received index {bad}: ids must lie in "
                f"[0, {input_dim})")

    def call(self, inputs):
        indices = self._indices(inputs)
        if self.quantization_mode is not None:
            outputs = self._quantized_lookup(indices, inputs.device)
            _add_activity_loss(self, outputs)
            return outputs
        # Checked by _indices: the op need not read the bounds back again.
        outputs = EmbeddingFunction(indices_checked=True).apply(indices, self.embeddings)
        _add_activity_loss(self, outputs)
        return outputs

    def compute_mask(self, inputs, mask=None):
        """``inputs != 0`` when ``mask_zero``, else None."""
        if not self.mask_zero:
            return None
        return ops.not_equal(inputs, 0)

    def compute_output_shape(self, input_shape):
        return tuple(input_shape) + (self.output_dim,)

    def get_config(self):
        return config_with_policy(self, {
            **super().get_config(),
            "input_dim": self.input_dim,
            "output_dim": self.output_dim,
            "embeddings_initializer": initializers.serialize(self.embeddings_initializer),
            "embeddings_regularizer": regularizers.serialize(self.embeddings_regularizer),
            "activity_regularizer": regularizers.serialize(self.activity_regularizer),
            "embeddings_constraint": constraints.serialize(self.embeddings_constraint),
            "mask_zero": self.mask_zero,
        })
