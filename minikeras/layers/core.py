"""Core layers: Dense, Activation, Flatten, Reshape, Permute, RepeatVector, Lambda.

Dense runs as one fused node of the graph (matmul, bias add and, for
"relu", the activation, written in place into the matmul's output), which
saves two temporaries the size of the output and two graph nodes per layer
against composing matmul, add and relu.

Layers applying "softmax" or "sigmoid" keep the pre-activation Tensor on
their output (``minikeras.losses.logits.attach_logits``), so that crossentropy losses can
use the stable fused logits path (as tf.keras does).
"""
import inspect
import math

import numpy

from minikeras._support import object_registration
from minikeras._support.safe_mode import refuse_lambda, resolve_safe_mode
from minikeras.backend.dtypes import is_float_dtype
from minikeras import activations, ops
from minikeras.layers.base import Layer
from minikeras.layers.input_spec import InputSpec
from minikeras.layers.kernel_arguments import set_weight_arguments, weight_arguments_config
from minikeras.layers.lora import LoraMixin
from minikeras.layers.quantized_dense import DenseQuantization
from minikeras.layers.quantized_weights import config_with_policy, read_quantization_config
from minikeras.losses.logits import attach_logits
from minikeras._support.argument_validation import is_int

__all__ = ["Dense", "Activation", "Flatten", "Reshape", "Permute", "RepeatVector", "Lambda"]


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
        lora_rank, lora_alpha: enable LoRA when built (layers/lora.py,
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
        if self.quantization_mode is not None:  # layers/quantized_dense.py
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


# ------------------------------------------------------------- Activation
class Activation(Layer):
    """Apply an activation function to the input.

    Args:
        activation: a name ("relu", "softmax", ...) or a function.
        **kwargs: base Layer arguments.
    """

    supports_masking = True

    def __init__(self, activation, **kwargs):
        super().__init__(**kwargs)
        self.activation = activations.get(activation)

    def call(self, inputs):
        return _apply_activation(self.activation, _float_input(self, inputs))

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)

    def get_config(self):
        return {**super().get_config(), "activation": activations.serialize(self.activation)}


# ---------------------------------------------------------------- Flatten
def _check_data_format(layer_name, data_format):
    data_format = data_format or "channels_last"
    if data_format not in ("channels_last", "channels_first"):
        raise ValueError(
            f"{layer_name}: data_format must be 'channels_last' or 'channels_first', received {data_format!r}."
        )
    return data_format


class Flatten(Layer):
    """Flatten every axis but the batch axis: ``(N, d1, d2, ...)`` -> ``(N, d1*d2*...)``.

    Args:
        data_format: "channels_last" (default) or "channels_first"; with
            channels_first the channels are moved last before flattening,
            so that the order matches a channels_last model (as Keras).
        **kwargs: base Layer arguments.
    """

    def __init__(self, data_format=None, **kwargs):
        super().__init__(**kwargs)
        self.data_format = _check_data_format("Flatten", data_format)
        self.input_spec = InputSpec(min_ndim=1)

    def call(self, inputs):
        if self.data_format == "channels_first" and inputs.ndim > 2:
            inputs = ops.transpose(inputs, (0,) + tuple(range(2, inputs.ndim)) + (1,))
        return ops.reshape(inputs, (inputs.shape[0], math.prod(inputs.shape[1:])))

    def compute_output_shape(self, input_shape):
        rest = input_shape[1:]
        return (input_shape[0], None if None in rest else math.prod(rest))

    def get_config(self):
        return {**super().get_config(), "data_format": self.data_format}


# ---------------------------------------------------------------- Reshape
class Reshape(Layer):
    """Reshape every sample to ``target_shape`` (the batch axis is kept).

    Args:
        target_shape: the new sample shape, without the batch axis; one
            entry may be -1 (inferred from the input's size).
        **kwargs: base Layer arguments.

    Raises:
        ValueError: an invalid target shape, or an input whose size does
            not fit it.
    """

    def __init__(self, target_shape, **kwargs):
        super().__init__(**kwargs)
        # A tuple or list of ints, as Keras (which refuses a bare int such as -1 with a TypeError);
        # a float size is refused, not truncated.
        if not isinstance(target_shape, (tuple, list)) or not all(is_int(size) for size in target_shape):
            raise TypeError(f"Reshape: target_shape must be a tuple of ints such as (-1,) or (4, 3), received "
                            f"{type(target_shape).__name__} {target_shape!r}.")
        target_shape = tuple(int(size) for size in target_shape)
        if sum(size == -1 for size in target_shape) > 1 or any(size == 0 or size < -1 for size in target_shape):
            raise ValueError(
                f"Reshape: target_shape must hold positive sizes and at most one -1, received {target_shape}."
            )
        self.target_shape = target_shape

    def _output_sample_shape(self, sample_shape):
        size = math.prod(sample_shape)
        known = math.prod(s for s in self.target_shape if s != -1)
        if -1 in self.target_shape:
            if size % known:
                raise ValueError(
                    f"Layer '{self.name}' cannot reshape an input of sample shape {tuple(sample_shape)} "
                    f"({size} elements) to target shape {self.target_shape}: {size} is not divisible by {known}."
                )
            return tuple(size // known if s == -1 else s for s in self.target_shape)
        if known != size:
            raise ValueError(
                f"Layer '{self.name}' cannot reshape an input of sample shape {tuple(sample_shape)} "
                f"({size} elements) to target shape {self.target_shape} ({known} elements)."
            )
        return self.target_shape

    def call(self, inputs):
        if not inputs.shape:
            raise ValueError(f"Layer '{self.name}' (Reshape) expects inputs with a batch axis, received a 0-d input.")
        return ops.reshape(inputs, (inputs.shape[0],) + self._output_sample_shape(inputs.shape[1:]))

    def compute_output_shape(self, input_shape):
        if None in input_shape[1:]:
            return (input_shape[0],) + tuple(None if s == -1 else s for s in self.target_shape)
        return (input_shape[0],) + self._output_sample_shape(input_shape[1:])

    def get_config(self):
        return {**super().get_config(), "target_shape": list(self.target_shape)}


# ---------------------------------------------------------------- Permute
class Permute(Layer):
    """Permute the non-batch axes, numbered from 1 as in Keras.

    Args:
        dims: a permutation of ``1..rank-1``; ``(2, 1)`` swaps the two axes
            of a ``(batch, a, b)`` input.
        **kwargs: base Layer arguments.
    """

    def __init__(self, dims, **kwargs):
        super().__init__(**kwargs)
        dims = tuple(dims)
        if sorted(dims) != list(range(1, len(dims) + 1)):
            raise ValueError(
                f"Permute: dims must be a permutation of 1..{len(dims)} (axis 0, the batch, stays first), "
                f"received dims={dims}."
            )
        self.dims = tuple(int(d) for d in dims)
        self.input_spec = InputSpec(ndim=len(self.dims) + 1)

    def call(self, inputs):
        return ops.transpose(inputs, (0,) + self.dims)

    def compute_output_shape(self, input_shape):
        return (input_shape[0],) + tuple(input_shape[d] for d in self.dims)

    def get_config(self):
        return {**super().get_config(), "dims": list(self.dims)}


# ----------------------------------------------------------- RepeatVector
class RepeatVector(Layer):
    """Repeat a ``(batch, features)`` input ``n`` times: ``(batch, n, features)``.

    Args:
        n: the number of repetitions (a positive int).
        **kwargs: base Layer arguments.
    """

    def __init__(self, n, **kwargs):
        super().__init__(**kwargs)
        if isinstance(n, bool) or not isinstance(n, int) or n <= 0:
            raise ValueError(f"RepeatVector: n must be a positive integer, received n={n!r}.")
        self.n = n
        self.input_spec = InputSpec(ndim=2)

    def call(self, inputs):
        return ops.repeat(ops.expand_dims(inputs, 1), self.n, axis=1)

    def compute_output_shape(self, input_shape):
        return (input_shape[0], self.n, input_shape[1])

    def get_config(self):
        return {**super().get_config(), "n": self.n}


# ----------------------------------------------------------------- Lambda
class Lambda(Layer):
    """Wrap a function of Tensors as a layer: ``Lambda(lambda x: x * 2)``.

    The function gets ``training`` too when its signature has that argument.

    Serialisation: Python code is never stored, so ``get_config`` records
    only the function's name and module. Loading a Lambda is refused in
    safe mode (the default, as in Keras 3: a model file must not choose code
    to run); with ``safe_mode=False`` (or after
    ``minikeras.config.enable_unsafe_deserialization()``) the function is
    taken from ``custom_objects`` (``{name: fn}``; a lambda is named
    ``"<lambda>"``) or from the functions registered with
    ``minikeras.saving.register_keras_serializable``. It is never imported
    or looked up in a module by the name the config gives.

    Args:
        function: a callable taking the input (Tensor or list of Tensors).
        output_shape: optional, recorded in the config (shapes are inferred
            by running the function).
        arguments: optional dict of extra keyword arguments for ``function``.
        **kwargs: base Layer arguments.
    """

    def __init__(self, function, output_shape=None, mask=None, arguments=None, **kwargs):
        super().__init__(**kwargs)
        if not callable(function):
            raise TypeError(f"Lambda expects a callable, received {function!r}.")
        self.function = function
        self.output_shape = output_shape
        self.mask = mask
        self.arguments = dict(arguments or {})
        try:
            parameters = inspect.signature(function).parameters
        except (TypeError, ValueError):
            parameters = {}
        self._function_has_training = "training" in parameters

    def call(self, inputs, training=None):
        kwargs = dict(self.arguments)
        if self._function_has_training:
            kwargs["training"] = training
        return self.function(inputs, **kwargs)

    def get_config(self):
        name = getattr(self.function, "__name__", type(self.function).__name__)
        return {
            **super().get_config(),
            "function": name,
            "module": getattr(self.function, "__module__", None),
            "function_type": "lambda" if name == "<lambda>" else "function",
            "output_shape": list(self.output_shape) if isinstance(self.output_shape, tuple) else self.output_shape,
            "arguments": self.arguments,
        }

    @classmethod
    def from_config(cls, config, custom_objects=None, safe_mode=None):
        """Rebuild the layer (see the class docstring).

        Args:
            config: ``get_config()``'s output.
            custom_objects: ``{name: function}`` holding the Lambda's function.
            safe_mode: refuse the Lambda (default: True unless unsafe
                deserialisation was enabled).

        Raises:
            UnsafeDeserializationError: in safe mode (a ValueError).
            ValueError: the function is neither in ``custom_objects`` nor
                registered.
        """
        config = dict(config)
        name = config.pop("function", None)
        module_name = config.pop("module", None)
        config.pop("function_type", None)
        if callable(name):  # a live config (not from a file): the function itself
            return cls(name, **config)
        if resolve_safe_mode(safe_mode):
            refuse_lambda(config.get("name"), name, module_name)
        try:
            function = object_registration.resolve_name(name, {}, custom_objects, kind="Lambda function")
        except ValueError:
            raise ValueError(
                f"Cannot rebuild Lambda layer '{config.get('name')}': its function {name!r} (module "
                f"{module_name!r}) is not in custom_objects nor registered. Pass it as "
                f"custom_objects={{{name!r}: function}} (a lambda needs a name there: the one in the config)."
            ) from None
        if not callable(function):
            raise ValueError(f"Cannot rebuild Lambda layer '{config.get('name')}': custom_objects[{name!r}] is "
                             f"not callable ({function!r}).")
        return cls(function, **config)
