"""What Dense, EinsumDense and Embedding share when quantized: swapping
their float weights for quantized ones, the float8 scale variables and
calls, the policy switch, and the config entries Keras writes.

int8 and int4 weights are not trainable (Keras's custom gradients give
them none); the bias stays trainable, as do LoRA adapters. A float8
layer's six scale and amax-history variables are trainable and marked
``overwrite_with_gradient``: their "gradients" are their next values
(ops/nn/float8.py, optimizers/_overwrite.py).
"""
from minikeras import ops
from minikeras.autograd import no_grad
from minikeras.dtype_policies.quantized import QuantizedFloat8DTypePolicy
from minikeras.ops.nn.float8 import Float8QuantizeInputs, Float8QuantizeOutputGradient

__all__ = []

#: The variables a float8 layer adds, in Keras's order (after kernel and bias in its files).
FLOAT8_VARIABLES = ("inputs_scale", "inputs_amax_history", "kernel_scale", "kernel_amax_history",
                    "outputs_grad_scale", "outputs_grad_amax_history")


def drop_weight(layer, weight):
    """Remove ``weight`` from ``layer``'s weights (Keras's ``del self._kernel``)."""
    layer._trainable_weights = [w for w in layer._trainable_weights if w is not weight]
    layer._non_trainable_weights = [w for w in layer._non_trainable_weights if w is not weight]


def add_frozen(layer, name, shape, dtype=None, initializer="zeros"):
    """A non-trainable weight (a quantized kernel, a scale, a zero point)."""
    return layer.add_weight(name=name, shape=tuple(shape), initializer=initializer, dtype=dtype, trainable=False)


def add_float8_variables(layer):
    """The six float8 variables (float32, not autocast, overwritten by their gradients)."""
    length = getattr(layer.dtype_policy, "amax_history_length",
                     QuantizedFloat8DTypePolicy.default_amax_history_length)
    for name in FLOAT8_VARIABLES:
        history = name.endswith("history")
        variable = layer.add_weight(name=name, shape=(length,) if history else (),
                                    initializer="zeros" if history else "ones", dtype="float32", trainable=True,
                                    autocast=False, overwrite_with_gradient=True)
        setattr(layer, name, variable)


def float8_operand(layer, tensor, prefix, training):
    """``tensor`` quantize-dequantized in float8_e4m3fn with the ``<prefix>_scale``
    and ``<prefix>_amax_history`` variables (updated when training)."""
    return Float8QuantizeInputs(training).apply(tensor, getattr(layer, f"{prefix}_scale"),
                                                getattr(layer, f"{prefix}_amax_history"))


def float8_output(layer, outputs):
    """``outputs`` unchanged, their gradient quantize-dequantized in float8_e5m2."""
    return Float8QuantizeOutputGradient().apply(outputs, layer.outputs_grad_scale, layer.outputs_grad_amax_history)


def float8_bias(layer, bias):
    """The bias a float8 layer adds: under a float32 compute dtype, rounded
    through bfloat16 first, as Keras does (for TensorFlow's bias-add fusion)."""
    if layer.compute_dtype == "float32":
        return ops.cast(ops.cast(bias, "bfloat16"), "float32")
    return bias


def quantize_inputs(quantizer, inputs, axis):
    """``quantizer(inputs, axis=axis)`` outside the graph: the int8 product's
    gradient passes straight through to ``inputs`` (ops/nn/int8_product.py)."""
    with no_grad():
        return quantizer(inputs, axis=axis)


def switch_policy(layer, mode, block_size=None):
    """Give a layer just quantized its policy (``"int8_from_<policy>"``), unless
    it has a quantized policy already (set by ``dtype_policy = ...``)."""
    if layer.dtype_policy.quantization_mode is not None:
        return
    name = f"int4/{-1 if block_size is None else block_size}" if mode == "int4" else mode
    layer._dtype_policy = _policies().get(f"{name}_from_{layer.dtype_policy.name}")


def _policies():
    from minikeras import dtype_policies

    return dtype_policies


def config_with_policy(layer, config):
    """``config`` with Keras's quantized entries: the serialized quantized
    policy (a float8 policy keeps its history length) and the quantization
    config."""
    from minikeras import quantizers

    if layer.dtype_policy.quantization_mode is not None:
        config["dtype"] = _policies().serialize(layer.dtype_policy)
    config["quantization_config"] = quantizers.serialize(layer.quantization_config)
    return config


def read_quantization_config(value):
    """A layer's ``quantization_config`` argument: a config, None, or its serialized form."""
    if isinstance(value, dict):
        from minikeras import quantizers

        return quantizers.deserialize(value)
    return value


class KerasWeightOrder:
    """A quantized layer's ``_all_own_weights``: Keras's order once quantized
    (``keras_weight_order``), the layer's own before."""

    def _all_own_weights(self):
        if self.quantization_mode is None:
            return super()._all_own_weights()
        return keras_weight_order(self)


def keras_weight_order(layer):
    """A quantized layer's own weights as Keras 3 lists them: those created
    trainable first (the bias, float8's scales), then the others (int8
    kernel and scales), each in creation order."""
    from minikeras.layers.base import _creation_order

    own = sorted(layer._trainable_weights + layer._non_trainable_weights, key=_creation_order)
    return [w for w in own if _created_trainable(w)] + [w for w in own if not _created_trainable(w)]


def _created_trainable(weight):
    from minikeras.layers.weight_info import weight_info

    info = weight_info(weight)
    return info.trainable if info is not None else weight.trainable


def in_spec_order(layer, names):
    """The layer's variables named ``names`` that exist, in that order (Keras's
    ``variable_serialization_spec``: the order of its ``vars`` datasets)."""
    found = []
    for name in names:
        value = getattr(layer, name, None)
        if value is not None:
            found.append(value)
    return found
