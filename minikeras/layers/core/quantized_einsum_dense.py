"""EinsumDense quantized as Keras 3 quantizes it (int8, int4, float8).

- int8: the kernel is quantized over its contracted axes, its scale kept in
  Keras's layout against the output (layers/core/einsum_quantization_layout.py);
  each call quantizes the inputs over their contracted axes and runs an
  exact int8 einsum (ops/nn/int8_product.py).
- int4: the kernel is flattened to ``(contracted, other)`` sizes (a plain
  reshape, as Keras does), quantized per column or in groups of rows, and
  packed two values to a byte along the columns; the call uses the
  dequantized kernel.
- float8: as Dense's, around the einsum.

Files hold Keras's ``vars`` order (kernel, bias, the mode's variables).
"""
import math

from minikeras import ops, quantizers
from minikeras.autograd import no_grad
from minikeras.layers.core.einsum_quantization_layout import quantization_layout
from minikeras.layers.core.quantized_dense import SPEC, int4_block_size, with_merged_lora_kernel
from minikeras.layers.core.quantized_weights import (KerasWeightOrder, add_float8_variables, add_frozen, drop_weight,
                                                     float8_bias, float8_operand, float8_output, in_spec_order,
                                                     quantize_inputs, switch_policy)
from minikeras.ops.nn.einsum_dense import _einsum2
from minikeras.ops.nn.int8_product import int8_contraction
from minikeras.quantizers.quantization_config import QuantizationConfig

__all__ = ["EinsumDenseQuantization"]


class EinsumDenseQuantization(KerasWeightOrder):
    """The quantization half of EinsumDense (build, call and saving hooks)."""

    quantization_config = None
    _int4_block_size = None
    _layout = None

    def _quantization_layout(self):
        if self._layout is None:
            self._layout = quantization_layout(self.equation, self.input_spec.ndim)
        return self._layout

    def _build_kernel(self, kernel_shape, initializer):
        mode = self.quantization_mode
        if mode is not None:
            self.quantized_build(kernel_shape, mode, self.quantization_config)
        if mode not in ("int8", "int4"):
            self.kernel = self.add_weight(name="kernel", shape=kernel_shape, initializer=initializer,
                                          regularizer=self.kernel_regularizer, constraint=self.kernel_constraint)

    def quantized_build(self, kernel_shape, mode, config=None):
        """Create the variables of ``mode`` (Keras's ``quantized_build``).

        Raises:
            ValueError: an equation whose scales cannot be laid out.
            NotImplementedError: gptq, awq.
        """
        kernel_shape = tuple(kernel_shape)
        if mode in ("int8", "int4"):
            layout = self._quantization_layout()
            layout.check()
            self.quantization_axis = tuple(layout.inputs.reduced)
        if mode == "int8":
            self.inputs_quantizer = QuantizationConfig.activation_quantizer_or_default(
                config, quantizers.AbsMaxQuantizer())
            self._kernel = add_frozen(self, "kernel", kernel_shape, "int8")
            self.kernel_scale = add_frozen(self, "kernel_scale", layout.kernel_scale_shape(kernel_shape),
                                           initializer="ones")
        elif mode == "int4":
            self._int4_build(kernel_shape, layout, config)
        elif mode == "float8":
            add_float8_variables(self)
        else:
            raise self._unsupported_mode_error(mode)
        self._is_quantized = True

    def _int4_build(self, kernel_shape, layout, config):
        self.inputs_quantizer = QuantizationConfig.activation_quantizer_or_default(config, None)
        self.original_kernel_shape = kernel_shape
        rows, columns = layout.flat_kernel_shape(kernel_shape)
        block_size = int4_block_size(self, config)
        grouped = block_size is not None and block_size != -1
        self._int4_block_size = block_size if grouped else None
        self._int4_unpacked_column_size, self._int4_rows = columns, rows
        self._kernel = add_frozen(self, "kernel", (rows, (columns + 1) // 2), "int8")
        scale_shape = (math.ceil(rows / block_size), columns) if grouped else (columns,)
        self.kernel_scale = add_frozen(self, "kernel_scale", scale_shape, initializer="ones")
        if grouped:
            self.kernel_zero = add_frozen(self, "kernel_zero", scale_shape, "int8")
            self.g_idx = add_frozen(self, "g_idx", (rows,), "float32")
            self.g_idx.assign(ops.floor_divide(ops.arange(rows, dtype="float32"), block_size))

    def quantize(self, mode=None, type_check=True, config=None):
        """Quantize the kernel to ``mode`` (module docstring; ``Layer.quantize``)."""
        from minikeras.layers.core.einsum_dense import EinsumDense

        if type_check and type(self) is not EinsumDense:
            raise self._not_implemented_error(self.quantize)
        self.quantization_config = config
        kernel = self._kernel
        kernel_shape = tuple(kernel.shape)
        values = scales = block_size = None
        if mode in ("int8", "int4"):
            layout = self._quantization_layout()
            layout.check()
        if mode == "int8":
            quantizer = QuantizationConfig.weight_quantizer_or_default(
                config, quantizers.AbsMaxQuantizer(axis=tuple(layout.kernel.reduced)))
            values, scale = quantizer(kernel, to_numpy=True)
            scales = [layout.kernel.for_output(ops, scale)]
        elif mode == "int4":
            block_size = int4_block_size(self, config)
            values, scales = _int4_values(kernel, layout.flat_kernel_shape(kernel_shape), block_size)
        elif mode != "float8":
            raise self._unsupported_mode_error(mode)
        if values is not None:
            drop_weight(self, kernel)
        self.quantized_build(kernel_shape, mode, config)
        if values is not None:
            self._kernel.assign(values)
            self.kernel_scale.assign(scales[0])
            if len(scales) > 1:
                self.kernel_zero.assign(scales[1])
        switch_policy(self, mode, block_size if block_size != -1 else None)

    def _quantized_call(self, inputs, training=None):
        mode = self.quantization_mode
        if mode == "float8":
            if self.lora_enabled:
                raise NotImplementedError("Currently, `_float8_call` doesn't support LoRA")
            outputs = _einsum2(self.equation, float8_operand(self, inputs, "inputs", training),
                               float8_operand(self, self._kernel, "kernel", training))
            outputs = float8_output(self, outputs)
            return outputs if self.bias is None else outputs + float8_bias(self, self.bias)
        outputs = self._int8_call(inputs) if mode == "int8" else self._int4_call(inputs)
        if self.lora_enabled:
            update = ops.matmul(_einsum2(self.equation, inputs, self.lora_kernel_a), self.lora_kernel_b)
            outputs = ops.cast(outputs + update * (self.lora_alpha / self.lora_rank), self.compute_dtype)
        return outputs if self.bias is None else outputs + self.bias

    def _quantized_inputs(self, inputs):
        if not self.inputs_quantizer:
            return None, None
        layout = self._quantization_layout()
        quantized, scale = quantize_inputs(self.inputs_quantizer, inputs, self.quantization_axis)
        with no_grad():
            return quantized, layout.inputs.for_output(ops, scale)

    def _int8_call(self, inputs):
        layout = self._quantization_layout()
        quantized, scale = self._quantized_inputs(inputs)
        return int8_contraction(inputs, quantized, scale, self._kernel, self.kernel_scale, self.compute_dtype,
                                equation=layout.equation, gradient_equation=layout.gradient_equation,
                                kernel_scale_layout=layout.kernel)

    def _int4_call(self, inputs):
        kernel = self._dequantized_int4_kernel()
        if self.inputs_quantizer and self._int4_block_size is None:
            layout = self._quantization_layout()
            quantized, scale = self._quantized_inputs(inputs)
            return int8_contraction(inputs, quantized, scale, kernel, None, self.compute_dtype,
                                    equation=layout.equation, gradient_equation=layout.gradient_equation)
        return _einsum2(self.equation, inputs, kernel)

    def _dequantized_int4_kernel(self):
        """The int4 kernel as floats, in its original shape (no gradient)."""
        with no_grad():
            kernel = quantizers.unpack_int4(self._kernel, self._int4_unpacked_column_size, axis=-1)
            if self._int4_block_size is None:
                kernel = ops.divide(ops.cast(kernel, self.compute_dtype), self.kernel_scale)
            else:
                groups = ops.cast(self.g_idx, "int32")
                zero = ops.cast(ops.take(self.kernel_zero, groups, axis=0), self.kernel_scale.dtype)
                kernel = ops.multiply(ops.subtract(ops.cast(kernel, zero.dtype), zero),
                                      ops.take(self.kernel_scale, groups, axis=0))
            return ops.reshape(ops.cast(kernel, self.compute_dtype), self.original_kernel_shape)

    def _keras_saved_weights(self):
        mode = self.quantization_mode
        if mode is None:
            return super()._keras_saved_weights()
        weights = in_spec_order(self, SPEC.get(mode, ()))
        if self.lora_enabled and mode in ("int8", "int4"):
            if mode == "int4":
                raise NotImplementedError("Saving an int4 EinsumDense with LoRA enabled is not supported.")
            weights = with_merged_lora_kernel(self, weights)
        return weights

    def _merged_lora_kernel(self):
        """``(kernel, scale)``: the dequantized int8 kernel plus the LoRA update, quantized again."""
        layout = self._quantization_layout()
        with no_grad():
            scale = ops.convert_to_tensor(layout.kernel.for_operand(self.kernel_scale.device.xp,
                                                                    self.kernel_scale.data))
            update = ops.matmul(self.lora_kernel_a, self.lora_kernel_b) * (self.lora_alpha / self.lora_rank)
            merged = ops.add(ops.divide(ops.cast(self._kernel, "float32"), scale), update)
            values, scale = quantizers.abs_max_quantize(merged, axis=tuple(layout.kernel.reduced), to_numpy=True)
            return values, layout.kernel.for_output(ops, scale)


def _int4_values(kernel, flat_shape, block_size):
    """``(packed kernel, [scale] or [scale, zero])`` of a float kernel flattened to ``flat_shape``."""
    flat = ops.reshape(kernel, flat_shape)
    if block_size is None or block_size == -1:
        values, scale = quantizers.abs_max_quantize(flat, axis=0, value_range=(-8, 7), dtype="int8", to_numpy=True)
        scales = [ops.squeeze(scale, axis=0)]
    else:
        values, scale, zero = quantizers.abs_max_quantize_grouped_with_zero_point(flat, block_size=block_size,
                                                                                 to_numpy=True)
        scales = [scale, zero]
    return quantizers.pack_int4(values, axis=-1)[0], scales
