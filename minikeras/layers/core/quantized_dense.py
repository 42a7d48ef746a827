"""Dense quantized as Keras 3 quantizes it: ``quantize("int8" | "int4" | "float8")``.

- int8: the kernel becomes int8 with one float scale per output unit
  (``kernel_scale``, ``kernel ~ int8 / kernel_scale``); each call quantizes
  the inputs per row and runs an exact int8 product (ops/nn/int8_product.py).
- int4: the same with values in [-8, 7], packed two to a byte along the
  output axis; with ``block_size`` (Int4QuantizationConfig's default 128)
  each group of input rows has its own scale and zero point, and the call
  is weight-only (float inputs, dequantized kernel).
- float8: the kernel stays float; inputs and kernel are quantize-dequantized
  in float8_e4m3fn and the output gradient in float8_e5m2, with scales
  from amax histories (layers/core/quantized_weights.py).

Files hold Keras's ``vars`` order: kernel, bias, then the mode's variables
(``variable_serialization_spec``); with LoRA enabled, the kernel merged
with the adapters and quantized again, as Keras saves it.
"""
import math

from minikeras import ops, quantizers
from minikeras.autograd import no_grad
from minikeras.layers.core.quantized_weights import (FLOAT8_VARIABLES, KerasWeightOrder, add_float8_variables,
                                                     add_frozen, drop_weight, float8_bias, float8_operand,
                                                     float8_output, in_spec_order, quantize_inputs, switch_policy)
from minikeras.ops.nn.int8_product import int8_contraction
from minikeras.quantizers.quantization_config import Int4QuantizationConfig, QuantizationConfig

__all__ = ["DenseQuantization", "MergedQuantizedKernel", "with_merged_lora_kernel"]

SPEC = {"int8": ("_kernel", "bias", "kernel_scale"),
        "int4": ("_kernel", "bias", "kernel_scale", "kernel_zero", "g_idx"),
        "float8": ("_kernel", "bias") + FLOAT8_VARIABLES}


def int4_block_size(layer, config):
    """The int4 block size: the config's, else the policy's (-1 meaning per channel), else None."""
    if isinstance(config, Int4QuantizationConfig):
        return config.block_size
    block_size = getattr(layer.dtype_policy, "block_size", None)
    return None if block_size == -1 else block_size


class MergedQuantizedKernel:
    """A quantized kernel as Keras saves it with LoRA enabled: the dequantized
    kernel plus the adapters' update, quantized again; ``assign`` (loading)
    sets the stored kernel and zeroes the adapters. ``scale`` is the matching
    scale entry."""

    def __init__(self, layer, merged, part):
        self.layer, self.merged, self.part = layer, merged, part
        weight = layer._kernel if part == 0 else layer.kernel_scale
        self.name, self.shape, self.dtype = weight.name, weight.shape, weight.dtype

    @property
    def data(self):
        return self.merged()[self.part].data

    def numpy(self):
        return self.merged()[self.part].numpy()

    def assign(self, value):
        layer = self.layer
        (layer._kernel if self.part == 0 else layer.kernel_scale).assign(value)
        for adapter in (layer.lora_kernel_a, layer.lora_kernel_b):
            adapter.assign(ops.zeros(adapter.shape, dtype=adapter.dtype))


def with_merged_lora_kernel(layer, weights):
    """``weights`` (a quantized layer's saved list) with its kernel and the
    kernel's scale replaced by the LoRA-merged pair, computed once when first
    read (``layer._merged_lora_kernel()``)."""
    cache = {}

    def merged():
        if "value" not in cache:
            cache["value"] = layer._merged_lora_kernel()
        return cache["value"]

    weights[0] = MergedQuantizedKernel(layer, merged, 0)
    index = next(i for i, w in enumerate(weights) if w is layer.kernel_scale)
    weights[index] = MergedQuantizedKernel(layer, merged, 1)
    return weights


class DenseQuantization(KerasWeightOrder):
    """The quantization half of Dense (its build, call and saving hooks)."""

    quantization_config = None
    _int4_block_size = None

    def _build_kernel(self, kernel_shape):
        """Build's kernel: quantized variables under a quantized policy, then
        the float kernel unless the mode replaces it (int8, int4)."""
        mode = self.quantization_mode
        if mode is not None:
            self.quantized_build(kernel_shape, mode, self.quantization_config)
        if mode not in ("int8", "int4"):
            self.kernel = self.add_weight("kernel", kernel_shape, initializer=self.kernel_initializer,
                                          regularizer=self.kernel_regularizer, constraint=self.kernel_constraint)

    def quantized_build(self, kernel_shape, mode, config=None):
        """Create the variables of ``mode`` (Keras's ``quantized_build``).

        Raises:
            NotImplementedError: a mode minikeras's Dense does not run (gptq, awq).
        """
        if mode == "int8":
            self.inputs_quantizer = QuantizationConfig.activation_quantizer_or_default(
                config, quantizers.AbsMaxQuantizer())
            self._kernel = add_frozen(self, "kernel", kernel_shape, "int8")
            self.kernel_scale = add_frozen(self, "kernel_scale", (self.units,), initializer="ones")
        elif mode == "int4":
            self._int4_build(kernel_shape, config)
        elif mode == "float8":
            add_float8_variables(self)
        else:
            raise self._unsupported_mode_error(mode)
        self._is_quantized = True

    def _int4_build(self, kernel_shape, config):
        self.inputs_quantizer = QuantizationConfig.activation_quantizer_or_default(config, None)
        input_dim, units = kernel_shape
        self._kernel = add_frozen(self, "kernel", (input_dim, (units + 1) // 2), "int8")
        block_size = int4_block_size(self, config)
        self._int4_block_size = block_size
        grouped = block_size is not None and block_size > 0
        scale_shape = (math.ceil(input_dim / block_size), units) if grouped else (units,)
        self.kernel_scale = add_frozen(self, "kernel_scale", scale_shape, initializer="ones")
        if grouped:
            self.kernel_zero = add_frozen(self, "kernel_zero", scale_shape, "int8")
            self.g_idx = add_frozen(self, "g_idx", (input_dim,), "float32")
            self.g_idx.assign(ops.floor_divide(ops.arange(input_dim, dtype="float32"), block_size))
        self._orig_input_dim, self._orig_output_dim = input_dim, units

    def quantize(self, mode=None, type_check=True, config=None):
        """Quantize the kernel to ``mode`` (see the module docstring and
        ``Layer.quantize``); a subclass needs ``type_check=False``."""
        from minikeras.layers.core.dense import Dense

        if type_check and type(self) is not Dense:
            raise self._not_implemented_error(self.quantize)
        self.quantization_config = config
        kernel = self._kernel
        kernel_shape = tuple(kernel.shape)
        block_size = None
        if mode == "int8":
            quantizer = QuantizationConfig.weight_quantizer_or_default(config, quantizers.AbsMaxQuantizer(axis=0))
            values, scale = quantizer(kernel, to_numpy=True)
            values, scale = [values], [ops.squeeze(scale, axis=0)]
        elif mode == "int4":
            block_size = int4_block_size(self, config)
            values, scale = _int4_values(kernel, block_size, config)
        elif mode == "float8":
            values = scale = None
        else:
            raise self._unsupported_mode_error(mode)
        if values is not None:
            drop_weight(self, kernel)
        self.quantized_build(kernel_shape, mode, config)
        if values is not None:
            self._kernel.assign(values[0])
            self.kernel_scale.assign(scale[0])
            if len(scale) > 1:
                self.kernel_zero.assign(scale[1])
        switch_policy(self, mode, block_size)

    def _quantized_call(self, inputs, training=None):
        mode = self.quantization_mode
        if mode == "float8":
            if self.lora_enabled:
                raise NotImplementedError("Currently, `_float8_call` doesn't support LoRA")
            outputs = ops.matmul(float8_operand(self, inputs, "inputs", training),
                                 float8_operand(self, self._kernel, "kernel", training))
            outputs = float8_output(self, outputs)
            bias = float8_bias(self, self.bias) if self.use_bias else None
        else:
            outputs = self._integer_product(inputs, mode)
            if self.lora_enabled:
                update = ops.matmul(ops.matmul(inputs, self.lora_kernel_a), self.lora_kernel_b)
                outputs = ops.cast(outputs + update * (self.lora_alpha / self.lora_rank), self.compute_dtype)
            bias = self.bias if self.use_bias else None
        return outputs if bias is None else outputs + bias

    def _integer_product(self, inputs, mode):
        if mode == "int8" or self._int4_block_size is None or self._int4_block_size == -1:
            kernel = self._kernel if mode == "int8" else quantizers.unpack_int4(
                self._kernel, self._orig_output_dim, axis=-1)
            quantized = scale = None
            if self.inputs_quantizer:
                quantized, scale = quantize_inputs(self.inputs_quantizer, inputs, -1)
            return int8_contraction(inputs, quantized, scale, kernel, self.kernel_scale, self.compute_dtype)
        return ops.matmul(inputs, self._dequantized_grouped_kernel())

    def _dequantized_grouped_kernel(self):
        """The sub-channel int4 kernel as floats: ``(q - zero[group]) * scale[group]``."""
        with no_grad():
            kernel = quantizers.unpack_int4(self._kernel, self._orig_output_dim, axis=-1)
            groups = ops.cast(self.g_idx, "int32")
            zero = ops.cast(ops.take(self.kernel_zero, groups, axis=0), self.kernel_scale.dtype)
            dequantized = ops.multiply(ops.subtract(ops.cast(kernel, zero.dtype), zero),
                                       ops.take(self.kernel_scale, groups, axis=0))
            return ops.cast(dequantized, self.compute_dtype)

    def _keras_saved_weights(self):
        mode = self.quantization_mode
        if mode is None:
            return super()._keras_saved_weights()
        weights = in_spec_order(self, SPEC.get(mode, ()))
        if self.lora_enabled and mode in ("int8", "int4"):
            weights = with_merged_lora_kernel(self, weights)
        return weights

    def _merged_lora_kernel(self):
        """``(kernel, scale)`` of the dequantized kernel plus the LoRA update, quantized again."""
        grouped = self.quantization_mode == "int4" and self._int4_block_size not in (None, -1)
        if grouped:
            raise NotImplementedError("Saving a sub-channel int4 Dense with LoRA enabled is not supported: quantize "
                                      "with Int4QuantizationConfig(block_size=None) for LoRA.")
        if self.quantization_mode == "int8":
            kernel = self._kernel
        else:
            kernel = quantizers.unpack_int4(self._kernel, self._orig_output_dim, axis=-1)
        update = ops.matmul(self.lora_kernel_a, self.lora_kernel_b) * (self.lora_alpha / self.lora_rank)
        merged = ops.add(ops.divide(ops.cast(kernel, "float32"), self.kernel_scale), update)
        value_range = (-127, 127) if self.quantization_mode == "int8" else (-8, 7)
        values, scale = quantizers.abs_max_quantize(merged, axis=0, value_range=value_range, to_numpy=True)
        if self.quantization_mode == "int4":
            values = quantizers.pack_int4(values, axis=-1)[0]
        return values, ops.squeeze(scale, axis=0)


def _int4_values(kernel, block_size, config):
    """``([packed kernel], [scale] or [scale, zero])`` of a float kernel."""
    if block_size is None or block_size == -1:
        quantizer = QuantizationConfig.weight_quantizer_or_default(
            config, quantizers.AbsMaxQuantizer(axis=0, value_range=(-8, 7), output_dtype="int8"))
        values, scale = quantizer(kernel, to_numpy=True)
        scales = [ops.squeeze(scale, axis=0)]
    else:
        values, scale, zero = quantizers.abs_max_quantize_grouped_with_zero_point(kernel, block_size=block_size,
                                                                                 to_numpy=True)
        scales = [scale, zero]
    return [quantizers.pack_int4(values, axis=-1)[0]], scales
