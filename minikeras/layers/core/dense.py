"""keras.layers.Dense: ``activation(inputs @ kernel + bias)``, and the helpers the
kernel layers share (activation, activity loss, float inputs, kernel arguments).
"""
import numpy

from minikeras import activations, ops
from minikeras.backend.dtypes import is_float_dtype
from minikeras.layers.base import Layer
from minikeras.layers.core.lora import LoraMixin
from minikeras.layers.core.quantized_dense import DenseQuantization
from minikeras.layers.core.quantized_weights import config_with_policy, read_quantization_config
from minikeras.layers.input_spec import InputSpec
from minikeras.layers.kernel_arguments import set_weight_arguments, weight_arguments_config
from minikeras.losses.logits import attach_logits

__all__ = ["Dense"]


# ---------------------------------------------------------------- helpers
def _add_activity_loss(layer, outputs):
    """Record ``activity_regularizer(output) / batch_size`` (Keras 3 scaling,
    so the penalty does not grow with the batch) as a loss of this call."""
    regularizer = layer.activity_regularizer
    if regularizer is None:
        return
    for output in outputs if isinstance(outputs, (list, tuple)) else [outputs]:
        loss = regularizer(output)
        if output.ndim > 0 and output.shape[0] > 0:
            loss = loss * (1.0 / output.shape[0])
        layer.add_loss(loss)


def _apply_activation(activation, logits):
    """``activation(logits)``, keeping the logits on a softmax/sigmoid output."""
    if activation is activations.linear:
        return logits
    output = activation(logits)
    if activation is activations.softmax or activation is activations.sigmoid:
        attach_logits(output, logits)
    return output


def _float_input(layer, inputs):
    """Integer/bool inputs cast to the layer's dtype (Keras autocasts them)."""
    if not is_float_dtype(inputs.dtype):
        return ops.cast(inputs, layer.compute_dtype)
    return inputs


# ------------------------------------------------------------------ Dense
def _kernel_config(layer):
    """The get_config entries of the arguments _set_kernel_arguments stores."""
    return {
        "activation": activations.serialize(layer.activation),
        "use_bias": layer.use_bias,
        **weight_arguments_config(layer),
    }


def _set_kernel_arguments(layer, activation, use_bias, kernel_initializer, bias_initializer, kernel_regularizer,
                          bias_regularizer, activity_regularizer, kernel_constraint, bias_constraint):
    """Resolve and store the kernel/bias arguments Dense and the conv layers share."""
    layer.activation = activations.get(activation)
    layer.use_bias = bool(use_bias)
    set_weight_arguments(layer, kernel_initializer, bias_initializer, kernel_regularizer, bias_regularizer,
                         activity_regularizer, kernel_constraint, bias_constraint)


class Dense(DenseQuantization, LoraMixin, Layer):
    """A densely-connected layer: ``activation(inputs @ kernel + bias)``.

    Applied to the last axis of inputs of any rank >= 2 (a ``(batch, steps,
    features)`` input gives ``(batch, steps, units)``).

    Args:
        units: the number of output features.
        activation: an activation name or function; None for linear.
        use_bias: whether to add a bias vector.
        kernel_initializer: default "glorot_uniform"; kernel shape ``(in, units)``.
        bias_initializer: default "zeros".
        kernel_regularizer, bias_regularizer: optional weight penalties.
        activity_regularizer: optional penalty on the output (divided by
            the batch size, as Keras 3 does).
        kernel_constraint, bias_constraint: optional projections applied
            after each update.
        lora_rank, lora_alpha: enable LoRA when built (layers/core/lora.py,
            :meth:`enable_lora`): the kernel frozen, a rank-``lora_rank``
            update trained instead. As in Keras 3.15, building resets
            lora_alpha to lora_rank (scale 1); call ``enable_lora(rank,
            lora_alpha)`` on a built layer for another scale.
        **kwargs: base Layer arguments (name, dtype, trainable, input_shape...).

    Example:
        >>> layer = Dense(10, activation="softmax")
        >>> layer(np.zeros((32, 784), "float32")).shape
        (32, 10)
    """

    supports_masking = True
    _build_keeps_lora_alpha = False

    def __init__(self, units, activation=None, use_bias=True, kernel_initializer="glorot_uniform",
                 bias_initializer="zeros", kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 kernel_constraint=None, bias_constraint=None, lora_rank=None, lora_alpha=None,
                 quantization_config=None, **kwargs):
        super().__init__(**kwargs)
        self._init_lora(lora_rank, lora_alpha)
        self.quantization_config = read_quantization_config(quantization_config)
        if isinstance(units, bool) or not isinstance(units, (int, numpy.integer)) or units <= 0:
            raise ValueError(f"Dense: units must be a positive integer, received units={units!r}.")
        self.units = int(units)
        _set_kernel_arguments(self, activation, use_bias, kernel_initializer, bias_initializer, kernel_regularizer,
                              bias_regularizer, activity_regularizer, kernel_constraint, bias_constraint)
        self.input_spec = InputSpec(min_ndim=2)
        self.kernel = self.bias = None

    def build(self, input_shape):
        if len(input_shape) < 2:
            raise ValueError(
                f"Input of layer '{self.name}' is incompatible: expected min_ndim=2 (batch, ..., features), "
                f"received ndim={len(input_shape)}."
            )
        in_dim = input_shape[-1]
        if in_dim is None or in_dim == 0:
            raise ValueError(
                f"Layer '{self.name}': the last axis of the input must be known and non-empty to build a Dense "
                f"layer, received input shape {tuple(input_shape)}."
            )
        self._build_kernel((in_dim, self.units))  # quantized variables first under a quantized policy
        if self.use_bias:
            self.bias = self.add_weight("bias", (self.units,), initializer=self.bias_initializer,
                                        regularizer=self.bias_regularizer, constraint=self.bias_constraint)
        self.input_spec = InputSpec(min_ndim=2, axes={-1: in_dim})
        self.built = True
        self._build_lora()

    def call(self, inputs, training=None):
        inputs = _float_input(self, inputs)
        if self.quantization_mode is not None:  # layers/core/quantized_dense.py
            outputs = _apply_activation(self.activation, self._quantized_call(inputs, training))
            _add_activity_loss(self, outputs)
            return outputs
        fuse_relu = self.activation is activations.relu
        logits = ops.dense(inputs, self.kernel, self.bias if self.use_bias else None, relu=fuse_relu)
        outputs = logits if fuse_relu else _apply_activation(self.activation, logits)
        _add_activity_loss(self, outputs)
        return outputs

    def compute_output_shape(self, input_shape):
        return tuple(input_shape[:-1]) + (self.units,)

    def get_config(self):
        return config_with_policy(self, {
            **super().get_config(),
            "units": self.units,
            **_kernel_config(self),
            **self._lora_config(),
        })
