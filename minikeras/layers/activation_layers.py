"""Activations as layers (Keras 3's ``keras.layers.activations``): Softmax,
ReLU, LeakyReLU, PReLU and ELU.

Each one composes ``minikeras.ops``; only PReLU has a weight (``alpha``).
All of them pass a mask on unchanged; Softmax also reads it, so masked
positions get probability 0 and the others share all of it.
"""
import numbers
import warnings

from minikeras import activations, constraints, initializers, ops, regularizers
from minikeras.layers.base import Layer
from minikeras.layers.core import _float_input
from minikeras.layers.input_spec import InputSpec

__all__ = ["Softmax", "ReLU", "LeakyReLU", "PReLU", "ELU"]


def _non_negative(layer_name, argument, value, allow_none=False):
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or value < 0:
        raise ValueError(f"{layer_name}: {argument} must be a non-negative number, received {argument}={value!r}.")
    return float(value)


class _ElementwiseActivation(Layer):
    """Shape-preserving, mask-preserving activation layer."""

    supports_masking = True

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)


class Softmax(_ElementwiseActivation):
    """Softmax over ``axis``; ``call(inputs, mask=None)`` gives masked
    positions (mask False) probability 0.

    Args:
        axis: an int or a list of ints (the softmax runs over all of them).
        **kwargs: base Layer arguments.

    Example:
        >>> Softmax()(np.array([[1.0, 2.0, 3.0]])).numpy().sum()
        1.0
    """

    def __init__(self, axis=-1, **kwargs):
        super().__init__(**kwargs)
        self.axis = list(axis) if isinstance(axis, (list, tuple)) else axis

    def call(self, inputs, mask=None):
        inputs = _float_input(self, inputs)
        if mask is not None:
            mask = self._check_mask(inputs, mask)
            # -1e9 (float32) stands for -inf: exp underflows to 0 without NaN
            # when a whole row is masked (Keras does the same).
            inputs = ops.where(mask, inputs, _large_negative(inputs.dtype))
        if isinstance(self.axis, list) and len(self.axis) > 1:
            outputs = ops.exp(inputs - ops.logsumexp(inputs, axis=tuple(self.axis), keepdims=True))
        else:
            axis = self.axis[0] if isinstance(self.axis, list) else self.axis
            outputs = ops.softmax(inputs, axis=axis)
        if mask is not None:
            outputs = ops.where(mask, outputs, 0.0)
        return outputs

    def _check_mask(self, inputs, mask):
        mask_shape, input_shape = tuple(mask.shape), tuple(inputs.shape)
        broadcastable = len(mask_shape) <= len(input_shape) and all(
            m == 1 or m == i for m, i in zip(mask_shape[::-1], input_shape[::-1]))
        if not broadcastable:
            raise ValueError(
                f"Layer '{self.name}' (Softmax): the mask must broadcast to the inputs, received mask shape "
                f"{mask_shape} for inputs of shape {input_shape}."
            )
        if mask.dtype.kind != "b":
            mask = ops.greater(mask, 0.5)
        return mask

    def get_config(self):
        return {**super().get_config(), "axis": self.axis}


def _large_negative(dtype):
    return -3e4 if dtype.itemsize <= 2 else -1e9


class ReLU(_ElementwiseActivation):
    """Rectified linear unit with Keras's options: ``max_value`` caps the
    output, values below ``threshold`` give ``negative_slope * (x - threshold)``.

    Args:
        max_value: None (no cap) or a non-negative number.
        negative_slope: non-negative slope below the threshold (default 0).
        threshold: non-negative threshold (default 0).
        **kwargs: base Layer arguments.
    """

    def __init__(self, max_value=None, negative_slope=0.0, threshold=0.0, **kwargs):
        super().__init__(**kwargs)
        self.max_value = _non_negative("ReLU", "max_value", max_value, allow_none=True)
        self.negative_slope = _non_negative("ReLU", "negative_slope", negative_slope)
        self.threshold = _non_negative("ReLU", "threshold", threshold)

    def call(self, inputs):
        return activations.relu(_float_input(self, inputs), negative_slope=self.negative_slope,
                                max_value=self.max_value, threshold=self.threshold)

    def get_config(self):
        return {**super().get_config(), "max_value": self.max_value, "negative_slope": self.negative_slope,
                "threshold": self.threshold}


class LeakyReLU(_ElementwiseActivation):
    """``x`` for ``x > 0``, ``negative_slope * x`` otherwise.

    Args:
        negative_slope: non-negative slope, 0.3 by default (Keras's layer
            default; the ``leaky_relu`` function defaults to 0.2).
        **kwargs: base Layer arguments; the deprecated ``alpha`` is read as
            ``negative_slope`` with a warning, as Keras does.
    """

    def __init__(self, negative_slope=0.3, **kwargs):
        if "alpha" in kwargs:
            negative_slope = kwargs.pop("alpha")
            warnings.warn("LeakyReLU: argument `alpha` is deprecated, use `negative_slope`.", stacklevel=2)
        super().__init__(**kwargs)
        self.negative_slope = _non_negative("LeakyReLU", "negative_slope", negative_slope)

    def call(self, inputs):
        return ops.leaky_relu(_float_input(self, inputs), negative_slope=self.negative_slope)

    def get_config(self):
        return {**super().get_config(), "negative_slope": self.negative_slope}


class ELU(_ElementwiseActivation):
    """Exponential linear unit: ``x`` for ``x > 0``, ``alpha * (exp(x) - 1)`` otherwise.

    Args:
        alpha: the scale of the negative part (default 1.0).
        **kwargs: base Layer arguments.
    """

    def __init__(self, alpha=1.0, **kwargs):
        super().__init__(**kwargs)
        if isinstance(alpha, bool) or not isinstance(alpha, numbers.Real):
            raise TypeError(f"ELU: alpha must be a number, received alpha={alpha!r}.")
        self.alpha = float(alpha)

    def call(self, inputs):
        return ops.elu(_float_input(self, inputs), alpha=self.alpha)

    def get_config(self):
        return {**super().get_config(), "alpha": self.alpha}


class PReLU(_ElementwiseActivation):
    """Leaky ReLU with a learned slope: ``relu(x) - alpha * relu(-x)``.

    Args:
        alpha_initializer: the slopes' initializer, "zeros" by default.
        alpha_regularizer, alpha_constraint: optional, for ``alpha``.
        shared_axes: axes (1-based, batch excluded) that share one slope,
            e.g. ``[1, 2]`` for one slope per channel of an image.
        **kwargs: base Layer arguments.

    The weight ``alpha`` has the input's shape without the batch axis, with
    size 1 on the shared axes (as Keras).
    """

    def __init__(self, alpha_initializer="zeros", alpha_regularizer=None, alpha_constraint=None,
                 shared_axes=None, **kwargs):
        super().__init__(**kwargs)
        self.alpha_initializer = initializers.get(alpha_initializer)
        self.alpha_regularizer = regularizers.get(alpha_regularizer)
        self.alpha_constraint = constraints.get(alpha_constraint)
        if shared_axes is None:
            self.shared_axes = None
        else:
            axes = list(shared_axes) if isinstance(shared_axes, (list, tuple)) else [shared_axes]
            if any(isinstance(a, bool) or not isinstance(a, int) or a < 1 for a in axes):
                raise ValueError(f"PReLU: shared_axes must be positive ints (axis 0 is the batch), "
                                 f"received shared_axes={shared_axes!r}.")
            self.shared_axes = axes
        self.alpha = None

    def build(self, input_shape):
        rank = len(input_shape)
        alpha_shape = list(input_shape[1:])
        for axis in self.shared_axes or []:
            if axis >= rank:
                raise ValueError(f"Layer '{self.name}' (PReLU): shared axis {axis} does not exist in inputs of "
                                 f"shape {tuple(input_shape)}.")
            alpha_shape[axis - 1] = 1
        if any(size is None for size in alpha_shape):
            raise ValueError(f"Layer '{self.name}' (PReLU): every non-shared axis must have a known size, "
                             f"received input shape {tuple(input_shape)}.")
        self.alpha = self.add_weight("alpha", alpha_shape, initializer=self.alpha_initializer,
                                     regularizer=self.alpha_regularizer, constraint=self.alpha_constraint)
        shared = set(self.shared_axes or [])
        self.input_spec = InputSpec(ndim=rank, axes={axis: input_shape[axis] for axis in range(1, rank)
                                                     if axis not in shared})
        self.built = True

    def call(self, inputs):
        inputs = _float_input(self, inputs)
        return ops.relu(inputs) - self.alpha * ops.relu(-inputs)

    def get_config(self):
        return {
            **super().get_config(),
            "alpha_initializer": initializers.serialize(self.alpha_initializer),
            "alpha_regularizer": regularizers.serialize(self.alpha_regularizer),
            "alpha_constraint": constraints.serialize(self.alpha_constraint),
            "shared_axes": self.shared_axes,
        }
