"""Quantizer, AbsMaxQuantizer and abs_max_quantize (Keras 3's int8 quantizers).

Absolute-max quantization maps a float tensor to integers in
``value_range`` with one scale per slice along ``axis``:
``scale = value_range[1] / (max(|x|) + epsilon)`` and
``q = clip(round(x * scale), *value_range)``, so ``x ~ q / scale``. Keras's
int8 layers use it for their kernels (one scale per output channel) and,
at every call, for their inputs (one scale per row).
"""
import numpy

from minikeras import ops
from minikeras.autograd import Tensor
from minikeras.backend.dtypes import standardize_dtype

__all__ = ["Quantizer", "AbsMaxQuantizer", "abs_max_quantize"]

#: Keras's ``backend.epsilon()`` default, which its quantizers take as their epsilon.
EPSILON = 1e-7


class Quantizer:
    """Base class of quantizers (``keras.quantizers.Quantizer``): ``quantizer(x)``
    returns the quantized tensor (and, for the int8 ones, its scale).

    Args:
        output_dtype: the dtype of the quantized values (default "int8").
    """

    def __init__(self, output_dtype="int8"):
        self.output_dtype = output_dtype

    def __call__(self, x):
        """The quantized ``x`` (the base class returns ``x`` unchanged)."""
        return x

    @classmethod
    def from_config(cls, config):
        """The quantizer ``get_config()`` described."""
        return cls(**config)

    def get_config(self):
        """The constructor arguments; a subclass that is saved defines it."""
        raise NotImplementedError(f"{self} does not implement get_config()")


def _axes(axis, name="abs_max_quantize"):
    if isinstance(axis, (list, tuple)):
        if not all(isinstance(a, (int, numpy.integer)) and not isinstance(a, bool) for a in axis):
            raise TypeError(f"{name} expects axis to be an int or a tuple of ints, received axis={axis!r}.")
        return tuple(int(a) for a in axis)
    if isinstance(axis, bool) or not isinstance(axis, (int, numpy.integer)):
        raise TypeError(f"{name} expects axis to be an int or a tuple of ints, received axis={axis!r}.")
    return int(axis)


def abs_max_quantize(inputs, axis, value_range=(-127, 127), dtype="int8", epsilon=EPSILON, to_numpy=False):
    """Quantize ``inputs`` by absolute maximum along ``axis``
    (``keras.quantizers.abs_max_quantize``).

    Args:
        inputs: a float tensor or array.
        axis: the axis (or tuple of axes) reduced to find each scale.
        value_range: ``(low, high)`` of the quantized values.
        dtype: the quantized values' dtype.
        epsilon: added to the maximum so that a zero slice gets a finite scale.
        to_numpy: compute on the host (saves device memory, as Keras's
            option); the results are Tensors on the current device either way.

    Returns:
        ``(quantized, scale)``: ``quantized`` in ``dtype``, ``scale`` in
        the inputs' dtype with the reduced axes kept (size 1), such that
        ``inputs ~ quantized / scale``.

    Example:
        >>> q, scale = abs_max_quantize(numpy.array([[1.0, -2.0]], "float32"), axis=-1)
        >>> q.numpy(), scale.numpy()
        (array([[ 64, -127]], dtype=int8), array([[63.5]], dtype=float32))
    """
    axis = _axes(axis)
    if to_numpy:
        host = inputs.numpy() if isinstance(inputs, Tensor) else numpy.asarray(inputs)
        dtype_in = host.dtype
        amax = numpy.max(numpy.abs(host), axis=axis, keepdims=True)
        scale = numpy.divide(value_range[1], numpy.add(amax, epsilon))
        outputs = numpy.clip(numpy.round(numpy.multiply(host, scale)), value_range[0], value_range[1])
        return ops.convert_to_tensor(outputs.astype(dtype)), ops.convert_to_tensor(scale.astype(dtype_in))
    inputs = ops.convert_to_tensor(inputs)
    amax = ops.max(ops.abs(inputs), axis=axis, keepdims=True)
    scale = ops.cast(ops.divide(value_range[1], ops.add(amax, epsilon)), standardize_dtype(inputs.dtype))
    outputs = ops.clip(ops.round(ops.multiply(inputs, scale)), value_range[0], value_range[1])
    return ops.cast(outputs, dtype), scale


class AbsMaxQuantizer(Quantizer):
    """Absolute-max quantization (``keras.quantizers.AbsMaxQuantizer``).

    Args:
        axis: deprecated in Keras (pass it to the call); the default axis of
            the call, stored as a tuple.
        value_range: ``(low, high)``, within [-128, 127] for int8.
        epsilon: added to each maximum.
        output_dtype: the quantized dtype (default "int8").

    Raises:
        ValueError: an int8 ``value_range`` outside [-128, 127].

    Example:
        >>> quantized, scale = AbsMaxQuantizer()(numpy.array([[1.0, -2.0]], "float32"))
    """

    def __init__(self, axis=None, value_range=(-127, 127), epsilon=EPSILON, output_dtype="int8"):
        super().__init__(output_dtype=output_dtype)
        self.axis = None if axis is None else (_axes(axis, "AbsMaxQuantizer"),) if not isinstance(
            axis, (list, tuple)) else _axes(axis, "AbsMaxQuantizer")
        self.value_range = tuple(value_range) if isinstance(value_range, list) else value_range
        self.epsilon = epsilon
        if output_dtype == "int8" and (value_range[0] < -128 or value_range[1] > 127):
            raise ValueError("Quantizer with output_dtype='int8' requires value_range to be within the interval "
                             f"[-128, 127]. Received: value_range={value_range}")

    def __call__(self, x, axis=None, to_numpy=False):
        """``(quantized, scale)`` of ``x`` along ``axis`` (default: the
        constructor's, else -1); see :func:`abs_max_quantize`."""
        if axis is None:
            axis = self.axis if self.axis is not None else -1
        return abs_max_quantize(x, axis, self.value_range, self.output_dtype, self.epsilon, to_numpy)

    def get_config(self):
        config = {"value_range": self.value_range, "epsilon": self.epsilon, "output_dtype": self.output_dtype}
        if self.axis is not None:
            config["axis"] = self.axis
        return config
