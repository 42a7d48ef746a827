"""EinsumDense: a dense layer whose contraction is any einsum equation
(the projections of attention heads, ``"abc,cde->abde"``, are the classic use).

The kernel's and bias's shapes come from the equation and the partial
``output_shape``, analysed exactly as Keras does (so weight files move both
ways); the call is one einsum op, a broadcast bias add and the activation.
"""
import re

import numpy

from minikeras import activations, constraints, initializers, ops, regularizers
from minikeras.initializers.variance_scaling import VarianceScaling
from minikeras.layers.base import Layer
from minikeras.layers.core.lora import LoraMixin
from minikeras.layers.core.quantized_einsum_dense import EinsumDenseQuantization
from minikeras.layers.core.quantized_weights import config_with_policy, read_quantization_config
from minikeras.layers.input_spec import InputSpec
from minikeras.layers.kernel_arguments import set_weight_arguments
from minikeras.ops.nn.einsum_dense import _einsum2

__all__ = ["EinsumDense"]


def _split_equation(equation, input_rank):
    """``(input_spec, weight_spec, output_spec, left_elided)`` of Keras's three
    accepted forms: ``X,Y->Z``, ``...X,Y->...Z`` and ``X...,Y->Z...``."""
    replaced = re.sub(r"\.\.\.", "0", equation)
    for pattern, left in (("([a-zA-Z]+),([a-zA-Z]+)->([a-zA-Z]+)", False),
                          ("0([a-zA-Z]+),([a-zA-Z]+)->0([a-zA-Z]+)", True),
                          ("([a-zA-Z]{2,})0,([a-zA-Z]+)->([a-zA-Z]+)0", False)):
        match = re.fullmatch(pattern, replaced)
        if match:
            return match.group(1), match.group(2), match.group(3), left
    raise ValueError(f"Invalid einsum equation '{equation}'. Equations must be in the form [X],[Y]->[Z], "
                     "...[X],[Y]->...[Z], or [X]...,[Y]->[Z]....")


def analyze_einsum(equation, bias_axes, input_shape, output_shape):
    """Keras's shape analysis: ``(kernel_shape, bias_shape, full_output_shape,
    input_axes, output_axes)`` (the kernel axes contracted with the input,
    and those that reach the output: the fans of the initializer).

    Raises:
        ValueError: an equation whose labels do not line up with the shapes.
    """
    input_spec, weight_spec, output_spec, left_elided = _split_equation(equation, len(input_shape))
    elided = len(input_shape) - len(input_spec)
    output_shape = [output_shape] if isinstance(output_shape, int) else list(output_shape)
    output_shape.insert(0, input_shape[0])
    if elided > 0 and left_elided:
        # In input order (Keras inserts them reversed, which only its
        # reported output shape sees; the kernel and bias shapes agree).
        output_shape[1:1] = list(input_shape[1:elided])
    elif elided > 0:
        output_shape.extend(input_shape[len(input_shape) - elided:])
    if left_elided:
        input_dims = {dim: (i + elided) - len(input_shape) for i, dim in enumerate(input_spec)}
        output_dims = {dim: i + elided for i, dim in enumerate(output_spec)}
    else:
        input_dims = {dim: i for i, dim in enumerate(input_spec)}
        output_dims = {dim: i for i, dim in enumerate(output_spec)}
    for dim in input_spec:
        if dim in output_dims:
            want, have = output_shape[output_dims[dim]], input_shape[input_dims[dim]]
            if want is not None and want != have:
                raise ValueError(f"Input shape and output shape do not match at shared dimension '{dim}'. Input "
                                 f"shape is {have}, and output shape is {want}.")
    for dim in output_spec:
        if dim not in input_spec and dim not in weight_spec:
            raise ValueError(f"Dimension '{dim}' was specified in the output '{output_spec}' but has no "
                             f"corresponding dim in the input spec '{input_spec}' or weight spec '{weight_spec}'")
    kernel_shape, input_axes, output_axes = [], [], []
    for i, dim in enumerate(weight_spec):
        if dim in output_dims:
            kernel_shape.append(output_shape[output_dims[dim]])
            output_axes.append(i)
        elif dim in input_dims:
            kernel_shape.append(input_shape[input_dims[dim]])
            input_axes.append(i)
        else:
            raise ValueError(f"Weight dimension '{dim}' did not have a match in either the input spec "
                             f"'{input_spec}' or the output spec '{output_spec}'. For this layer, the weight must be "
                             "fully specified.")
    bias_shape = None
    if bias_axes is not None:
        offset = elided if left_elided else 0
        sizes = {char: output_shape[i + offset] for i, char in enumerate(output_spec)}
        for char in bias_axes:
            if char not in output_spec:
                raise ValueError(f"Bias dimension '{char}' was requested, but is not part of the output spec "
                                 f"'{output_spec}'")
        first = min(output_spec.find(char) for char in bias_axes)
        bias_shape = [sizes[char] if char in bias_axes else 1 for char in output_spec[first:]]
        if not left_elided:
            bias_shape.extend([1] * elided)
    return kernel_shape, bias_shape, output_shape, input_axes, output_axes


def _as_matmul(equation):
    """``(contracted, output)`` label counts when ``equation`` is a plain
    matrix product after reshapes (input ``P + C``, kernel ``C + O``, output
    ``P + O``, optionally with ``...`` in front), else None."""
    input_spec, weight_spec, output_spec, left_elided = _split_equation(equation, 0)
    if "..." in equation and not left_elided:
        return None
    contracted = "".join(label for label in input_spec if label not in output_spec)
    if not contracted or not input_spec.endswith(contracted) or not weight_spec.startswith(contracted):
        return None
    kept, produced = input_spec[:-len(contracted)], weight_spec[len(contracted):]
    if output_spec != kept + produced or any(label in weight_spec for label in kept):
        return None
    return len(contracted), len(produced)


class _FannedInitializer:
    """A variance-scaling initializer whose fans are the kernel's contracted
    and output axes (Keras's ``input_axes``/``output_axes``), not the
    trailing two axes a plain kernel would use. Draws are i.i.d., so
    drawing the ``(fan_in, fan_out)`` matrix and reshaping is exact."""

    def __init__(self, initializer, input_axes, output_axes):
        self.initializer, self.input_axes, self.output_axes = initializer, input_axes, output_axes

    def __call__(self, shape, dtype="float32"):
        fan_in = int(numpy.prod([shape[i] for i in self.input_axes])) if self.input_axes else 1
        fan_out = int(numpy.prod([shape[i] for i in self.output_axes])) if self.output_axes else 1
        return numpy.asarray(self.initializer((fan_in, fan_out), dtype=dtype)).reshape(shape)


class EinsumDense(EinsumDenseQuantization, LoraMixin, Layer):
    """``activation(einsum(equation, inputs, kernel) + bias)``.

    Args:
        equation: ``"ab,bc->ac"``-style, with ``...`` allowed before or after
            the labels of the input and output (as Keras).
        output_shape: the output shape without the batch axis (and the
            elided axes); an int for one axis, None entries copy the input.
        activation: an activation name or function (default linear).
        bias_axes: the output labels the bias spans (default None: no bias).
        kernel_initializer, bias_initializer, kernel_regularizer,
        bias_regularizer, kernel_constraint, bias_constraint: as Dense.
        lora_rank: a rank enables LoRA when the layer is built (the kernel
            frozen, ``lora_kernel_a``/``lora_kernel_b`` trained; see
            layers/core/lora.py and :meth:`enable_lora`).
        lora_alpha: the LoRA update's scale is ``lora_alpha / lora_rank``
            (default lora_rank).
        quantization_config: a ``quantizers.QuantizationConfig`` for
            ``quantize()`` or a quantized dtype policy
            (layers/core/quantized_einsum_dense.py).
        **kwargs: base Layer arguments.

    Example:
        >>> layer = EinsumDense("abc,cde->abde", output_shape=(None, 4, 8), bias_axes="de")
        >>> layer(numpy.ones((2, 5, 16), "float32")).shape
        (2, 5, 4, 8)
    """

    def __init__(self, equation, output_shape, activation=None, bias_axes=None, kernel_initializer="glorot_uniform",
                 bias_initializer="zeros", kernel_regularizer=None, bias_regularizer=None, kernel_constraint=None,
                 bias_constraint=None, lora_rank=None, lora_alpha=None, gptq_unpacked_column_size=None,
                 quantization_config=None, activity_regularizer=None, **kwargs):
        super().__init__(**kwargs)
        if not isinstance(equation, str):
            raise TypeError(f"EinsumDense: equation must be a string, received {equation!r}.")
        _split_equation(equation, 0)
        self.equation = equation
        self.partial_output_shape = (output_shape,) if isinstance(output_shape, int) else tuple(output_shape)
        self.bias_axes = bias_axes
        self.activation = activations.get(activation)
        set_weight_arguments(self, kernel_initializer, bias_initializer, kernel_regularizer, bias_regularizer,
                             activity_regularizer, kernel_constraint, bias_constraint)
        self._init_lora(lora_rank, lora_alpha)
        self.quantization_config = read_quantization_config(quantization_config)
        self._matmul_form = _as_matmul(equation)
        self.kernel = self.bias = None

    def build(self, input_shape):
        kernel_shape, bias_shape, self._full_output_shape, input_axes, output_axes = analyze_einsum(
            self.equation, self.bias_axes, input_shape, self.partial_output_shape)
        self.input_spec = InputSpec(ndim=len(input_shape))
        initializer = self.kernel_initializer
        if isinstance(initializer, VarianceScaling):
            initializer = _FannedInitializer(initializer, input_axes, output_axes)
        self._build_kernel(tuple(kernel_shape), initializer)  # quantized variables first under a quantized policy
        if bias_shape is not None:
            self.bias = self.add_weight(name="bias", shape=tuple(bias_shape), initializer=self.bias_initializer,
                                        regularizer=self.bias_regularizer, constraint=self.bias_constraint)
        self.built = True
        self._build_lora()

    def call(self, inputs, training=None):
        if self.quantization_mode is not None:  # layers/core/quantized_einsum_dense.py
            outputs = self.activation(self._quantized_call(inputs, training))
            if self.activity_regularizer is not None:
                self.add_loss(self.activity_regularizer(outputs))
            return outputs
        kernel = self.kernel  # with LoRA on, the merged kernel: computed once per call
        kernel = kernel if kernel.dtype == inputs.dtype else ops.cast(kernel, inputs.dtype)
        if self._matmul_form is not None:
            # One 2-D GEMM on the device's threaded matmul (NumPy's einsum runs single-threaded BLAS).
            contracted, produced = self._matmul_form
            size_in = int(numpy.prod(kernel.shape[:contracted]))
            flat = ops.reshape(inputs, (-1, size_in))
            product = ops.matmul(flat, ops.reshape(kernel, (size_in, -1)))
            outputs = ops.reshape(product, tuple(inputs.shape[:inputs.ndim - contracted]) +
                                  tuple(kernel.shape[contracted:]))
        else:
            outputs = _einsum2(self.equation, inputs, kernel)
        if self.bias is not None:
            outputs = outputs + self.bias
        outputs = self.activation(outputs)
        if self.activity_regularizer is not None:
            self.add_loss(self.activity_regularizer(outputs))
        return outputs

    def compute_output_shape(self, input_shape):
        return tuple(analyze_einsum(self.equation, self.bias_axes, input_shape, self.partial_output_shape)[2])

    def get_config(self):
        return config_with_policy(self, {
            **super().get_config(), "output_shape": tuple(self.partial_output_shape), "equation": self.equation,
            "activation": activations.serialize(self.activation), "bias_axes": self.bias_axes,
            "kernel_initializer": initializers.serialize(self.kernel_initializer),
            "bias_initializer": initializers.serialize(self.bias_initializer),
            "kernel_regularizer": None if self.kernel_regularizer is None else regularizers.serialize(
                self.kernel_regularizer),
            "bias_regularizer": None if self.bias_regularizer is None else regularizers.serialize(
                self.bias_regularizer),
            "activity_regularizer": None if self.activity_regularizer is None else regularizers.serialize(
                self.activity_regularizer),
            "kernel_constraint": None if self.kernel_constraint is None else constraints.serialize(
                self.kernel_constraint),
            "bias_constraint": None if self.bias_constraint is None else constraints.serialize(self.bias_constraint),
            **self._lora_config(),
        })
