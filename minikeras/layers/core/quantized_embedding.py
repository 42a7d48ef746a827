"""Embedding quantized as Keras 3 quantizes it (int8, int4; float8 is refused).

- int8: the table becomes int8 with one scale per row (per id: Keras
  reduces the output axis, usually the shorter one); a lookup divides the
  rows by their scales.
- int4: the rows packed two values to a byte, with one scale per row, or
  (``block_size``) a scale and zero point per group of output columns.

The table gets no gradient once quantized (Keras needs no custom gradient
for it); files hold Keras's ``vars`` order (embeddings, then scales).
"""
import math

from minikeras import ops, quantizers
from minikeras.autograd import no_grad
from minikeras.autograd.tensor import from_array
from minikeras.layers.core.quantized_dense import int4_block_size
from minikeras.layers.core.quantized_weights import (KerasWeightOrder, add_frozen, drop_weight, in_spec_order,
                                                     switch_policy)
from minikeras.quantizers.quantization_config import QuantizationConfig

__all__ = ["EmbeddingQuantization"]

SPEC = {"int8": ("embeddings", "embeddings_scale"),
        "int4": ("embeddings", "embeddings_scale", "embeddings_zero", "g_idx")}


class EmbeddingQuantization(KerasWeightOrder):
    """The quantization half of Embedding (build, lookup and saving hooks)."""

    quantization_config = None
    _int4_block_size = None

    def _quantization_mode_error(self, mode):
        return NotImplementedError("Invalid quantization mode. Expected one of ('int8', 'int4'). "
                                   f"Received: quantization_mode={mode}")

    def _build_table(self):
        mode = self.quantization_mode
        shape = (self.input_dim, self.output_dim)
        if mode is not None:
            self.quantized_build(shape, mode, self.quantization_config)
        if mode not in ("int8", "int4"):
            self.embeddings = self.add_weight("embeddings", shape, initializer=self.embeddings_initializer,
                                              regularizer=self.embeddings_regularizer,
                                              constraint=self.embeddings_constraint)

    def quantized_build(self, embeddings_shape, mode, config=None):
        """Create the variables of ``mode``.

        Raises:
            NotImplementedError: a mode other than int8 and int4 (Keras's message).
        """
        input_dim, output_dim = embeddings_shape
        if mode == "int8":
            self.embeddings = add_frozen(self, "embeddings", embeddings_shape, "int8")
            self.embeddings_scale = add_frozen(self, "embeddings_scale", (input_dim,), initializer="ones")
        elif mode == "int4":
            self.embeddings = add_frozen(self, "embeddings", (input_dim, (output_dim + 1) // 2), "int8")
            block_size = int4_block_size(self, config)
            self._int4_block_size = block_size
            grouped = block_size is not None and block_size > 0
            scale_shape = (input_dim, math.ceil(output_dim / block_size)) if grouped else (input_dim,)
            self.embeddings_scale = add_frozen(self, "embeddings_scale", scale_shape, initializer="ones")
            if grouped:
                self.embeddings_zero = add_frozen(self, "embeddings_zero", scale_shape, "int8")
                self.g_idx = add_frozen(self, "g_idx", (output_dim,), "float32")
                self.g_idx.assign(ops.floor_divide(ops.arange(output_dim, dtype="float32"), block_size))
        else:
            raise self._quantization_mode_error(mode)
        self._is_quantized = True

    def quantize(self, mode=None, type_check=True, config=None):
        """Quantize the table to ``mode`` (module docstring; ``Layer.quantize``)."""
        from minikeras.layers.core.embedding import Embedding

        if type_check and type(self) is not Embedding:
            raise self._not_implemented_error(self.quantize)
        self.quantization_config = config
        table = self.embeddings
        block_size, zero = None, None
        if mode == "int8":
            quantizer = QuantizationConfig.weight_quantizer_or_default(config, quantizers.AbsMaxQuantizer(axis=-1))
            values, scale = quantizer(table, to_numpy=True)
            scale = ops.squeeze(scale, axis=-1)
        elif mode == "int4":
            block_size = int4_block_size(self, config)
            if block_size is None or block_size == -1:
                quantizer = QuantizationConfig.weight_quantizer_or_default(
                    config, quantizers.AbsMaxQuantizer(axis=-1, value_range=(-8, 7), output_dtype="int8"))
                values, scale = quantizer(table, to_numpy=True)
                scale = ops.squeeze(scale, axis=-1)
            else:
                values, scale, zero = quantizers.abs_max_quantize_grouped_with_zero_point(
                    ops.transpose(table), block_size=block_size, to_numpy=True)
                values, scale, zero = ops.transpose(values), ops.transpose(scale), ops.transpose(zero)
            values = quantizers.pack_int4(values, axis=-1)[0]
        else:
            raise self._quantization_mode_error(mode)
        drop_weight(self, table)
        self.quantized_build((self.input_dim, self.output_dim), mode, config)
        self.embeddings.assign(values)
        self.embeddings_scale.assign(scale)
        if zero is not None:
            self.embeddings_zero.assign(zero)
        switch_policy(self, mode, block_size)

    def _quantized_lookup(self, indices, device):
        """The dequantized rows of ``indices`` (a checked integer array)."""
        ids = from_array(indices, device)
        with no_grad():
            if self.quantization_mode == "int8":
                rows = ops.take(self.embeddings, ids, axis=0)
            else:
                rows = ops.take(quantizers.unpack_int4(self.embeddings, self.output_dim, axis=-1), ids, axis=0)
            rows = ops.cast(rows, self.compute_dtype)
            scale = ops.take(self.embeddings_scale, ids, axis=0)
            if self.quantization_mode == "int8" or self._int4_block_size in (None, -1):
                return ops.divide(rows, ops.expand_dims(scale, -1))
            groups = ops.cast(self.g_idx, "int32")
            zero = ops.cast(ops.take(ops.take(self.embeddings_zero, ids, axis=0), groups, axis=-1), scale.dtype)
            return ops.multiply(ops.subtract(rows, zero), ops.take(scale, groups, axis=-1))

    def _keras_saved_weights(self):
        mode = self.quantization_mode
        if mode is None:
            return list(self._trainable_weights) + list(self._non_trainable_weights)
        return in_spec_order(self, SPEC.get(mode, ()))
