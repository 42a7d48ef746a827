"""``keras.ops.nn``'s normalisations and losses as functions: batch_normalization,
layer_normalization, rms_normalization, normalize, binary/categorical/sparse
categorical crossentropy, multi_hot, psnr.

Compositions of differentiable ops with Keras's numerics: probabilities are
clipped to ``[epsilon, 1 - epsilon]`` (``keras.config.epsilon()``), the
normalisations' default epsilon is that epsilon too, and the ``from_logits``
paths use the fused softmax/sigmoid crossentropy Functions.
"""

__all__ = ["batch_normalization", "layer_normalization", "rms_normalization", "normalize", "binary_crossentropy",
           "categorical_crossentropy", "sparse_categorical_crossentropy", "multi_hot", "psnr"]

import math

import numpy

from minikeras.backend import keras_helpers
from minikeras.backend.dtypes import is_float_dtype
from minikeras.ops._checks import normalize_axis
from minikeras.ops.array.reshaping import reshape, squeeze
from minikeras.ops.math._elementwise import operand
from minikeras.ops.math._operands import _as_tensor
from minikeras.ops.math.compare import clip, maximum, minimum
from minikeras.ops.math.exp_log import log
from minikeras.ops.math.powers import rsqrt
from minikeras.ops.nn import softmax as _softmax
from minikeras.ops.reduce import max as _max, mean, sum as _sum
from minikeras._support.argument_validation import validate_axis, validate_flag, validate_int, validate_number


def _tensor(op_name, x):
    """A real operand: normalisations and losses of complex numbers are refused (a cast
    to float would drop the imaginary part; Keras's backends disagree on their meaning)."""
    return _as_tensor(op_name, operand(op_name, x), allow_complex=False)


def _along(vector, axis, ndim):
    axis = axis % ndim
    return reshape(vector, tuple(-1 if i == axis else 1 for i in range(ndim)))


def batch_normalization(x, mean, variance, axis, offset=None, scale=None, epsilon=1e-3):  # noqa: A002
    """``(x - mean) / sqrt(variance + epsilon) * scale + offset`` with 1-D statistics along ``axis``."""
    x = _tensor("batch_normalization", x)
    axis = validate_axis("batch_normalization", axis, x.ndim)
    epsilon = validate_number("batch_normalization", "epsilon", epsilon, minimum=0)
    statistics = {}
    for name, value in (("mean", mean), ("variance", variance)):
        if value is None:
            raise TypeError(f"batch_normalization: {name} must be a tensor of per-channel statistics, received None.")
    for name, value in (("mean", mean), ("variance", variance), ("scale", scale), ("offset", offset)):
        if value is None:
            continue
        vector = _tensor("batch_normalization", value)
        if name == "mean" and vector.dtype == numpy.bool_:
            raise TypeError("batch_normalization: mean must be numbers, received dtype bool (Keras negates the mean, "
                            "which bools do not allow).")
        if vector.shape != (x.shape[axis],):
            raise ValueError(f"batch_normalization: {name} must be a vector of the length of axis {axis} of x "
                             f"({x.shape[axis]}, x of shape {x.shape}), received shape {vector.shape}.")
        statistics[name] = _along(vector, axis, x.ndim)
    inverse = rsqrt(statistics["variance"] + epsilon)
    if scale is not None:
        inverse = inverse * statistics["scale"]
    out = (x - statistics["mean"]) * inverse
    if offset is not None:
        out = out + statistics["offset"]
    if is_float_dtype(x.dtype) and out.dtype != x.dtype:
        out = out.astype(x.dtype)  # a float x keeps its dtype (TensorFlow's batch_normalization casts to it)
    return out


def _epsilon(epsilon, op_name="normalize", minimum=0):
    return keras_helpers.epsilon() if epsilon is None else validate_number(op_name, "epsilon", epsilon, minimum=minimum)


def layer_normalization(x, gamma=None, beta=None, axis=-1, epsilon=None, **kwargs):
    """Normalise over ``axis`` to mean 0 and variance 1, then ``* gamma + beta``.

    ``rms_scaling=True`` (a deprecated Keras keyword) gives RMS normalisation.
    """
    if kwargs.pop("rms_scaling", False):
        return rms_normalization(x, gamma, axis, epsilon)
    if kwargs:
        raise TypeError(f"layer_normalization: unexpected keyword arguments {sorted(kwargs)}.")
    x = _tensor("layer_normalization", x)
    if not is_float_dtype(x.dtype):
        x = x.astype("float32")
    axes = axis if isinstance(axis, (tuple, list)) else (axis,)
    axes = tuple(validate_axis("layer_normalization", a, x.ndim) for a in axes)  # None refused, as Keras
    size = 1
    for a in axes:
        size *= x.shape[a]
    for name, value in (("gamma", gamma), ("beta", beta)):
        # Keras reshapes them to the normalised axes: they hold one value per position there
        if value is not None and getattr(operand("layer_normalization", value), "size", None) != size:
            raise ValueError(f"layer_normalization: {name} must hold {size} values (the size of axis {axis!r} of x "
                             f"{x.shape}), received {value!r:.60}.")
    epsilon = _epsilon(epsilon, "layer_normalization")
    if x.size == 0:  # nothing to normalise: the output is as empty as x, as Keras's (an axis of size 0 included)
        out = x * 1
    else:
        centered = x - mean(x, axis, True)
        out = centered * rsqrt(mean(centered * centered, axis, True) + epsilon)
    if gamma is not None:
        out = out * _tensor("layer_normalization", gamma)
    if beta is not None:
        out = out + _tensor("layer_normalization", beta)
    return out


def rms_normalization(x, scale=None, axis=-1, epsilon=None):
    """``x / sqrt(mean(x**2 over axis) + epsilon) * scale``."""
    x = _tensor("rms_normalization", x)
    if not is_float_dtype(x.dtype):
        x = x.astype("float32")
    epsilon = _epsilon(epsilon, "rms_normalization")
    if x.size == 0:  # nothing to normalise: the output is as empty as x, as Keras's (an axis of size 0 included)
        normalize_axis("rms_normalization", axis, x.ndim)
        out = x * 1
    else:
        out = x * rsqrt(mean(x * x, axis, True) + epsilon)
    return out * _tensor("rms_normalization", scale) if scale is not None else out


def normalize(x, axis=-1, order=2, epsilon=None):
    """``x`` divided by its ``order``-norm over ``axis`` (the norm floored at ``epsilon``)."""
    x = _tensor("normalize", x)
    epsilon = _epsilon(epsilon, "normalize", minimum=math.ulp(0.0))  # the norm's floor: divided by
    order = validate_int("normalize", "order", order, minimum=1)  # Keras: an int >= 1
    if order == 2:
        inverse = minimum(rsqrt(_sum(x * x, axis, True)), 1.0 / epsilon)
        return x * inverse
    from minikeras.ops.math.linalg import norm

    return x / maximum(norm(x, ord=order, axis=axis, keepdims=True), epsilon)


def binary_crossentropy(target, output, from_logits=False):
    """Elementwise binary crossentropy (probabilities clipped to ``[eps, 1 - eps]``, as Keras)."""
    target, output = _tensor("binary_crossentropy", target), _tensor("binary_crossentropy", output)
    if target.shape != output.shape:
        raise ValueError(f"binary_crossentropy: target and output must have the same shape, received "
                         f"{target.shape} and {output.shape}.")
    if validate_flag("binary_crossentropy", "from_logits", from_logits):
        return _softmax.sigmoid_cross_entropy(output, target)
    eps = keras_helpers.epsilon()
    output = clip(output, eps, 1.0 - eps)
    return -(target * log(output) + (1 - target) * log(1 - output))


def categorical_crossentropy(target, output, from_logits=False, axis=-1):
    """Crossentropy over ``axis`` (probabilities renormalised and clipped, as Keras)."""
    target, output = _tensor("categorical_crossentropy", target), _tensor("categorical_crossentropy", output)
    if target.shape != output.shape:
        raise ValueError(f"categorical_crossentropy: target and output must have the same shape, received "
                         f"{target.shape} and {output.shape}.")
    if validate_flag("categorical_crossentropy", "from_logits", from_logits):
        return _softmax.softmax_cross_entropy(output, target, axis=axis)
    eps = keras_helpers.epsilon()
    output = clip(output / _sum(output, axis, True), eps, 1.0 - eps)
    return -_sum(target * log(output), axis)


def sparse_categorical_crossentropy(target, output, from_logits=False, axis=-1):
    """Crossentropy with integer class ids in ``target`` (class axis ``axis`` of ``output``)."""
    from minikeras.ops.nn.embedding import one_hot

    target, output = _tensor("sparse_categorical_crossentropy", target), _tensor(
        "sparse_categorical_crossentropy", output)
    from_logits = validate_flag("sparse_categorical_crossentropy", "from_logits", from_logits)
    if output.ndim == 0:
        raise ValueError("sparse_categorical_crossentropy expects output with a class axis, received a scalar.")
    axis = validate_axis("sparse_categorical_crossentropy", axis, output.ndim)
    if output.shape[axis] == 0:
        raise ValueError(f"sparse_categorical_crossentropy: output has no classes (shape {output.shape}).")
    if target.size and target.dtype.kind in "iu":
        low, high = target.device.bounds(target.data)
        if low < 0 or high >= output.shape[axis]:
            raise ValueError(f"sparse_categorical_crossentropy: target must hold class ids in [0, "
                             f"{output.shape[axis]}), received {low if low < 0 else high}.")
    if target.ndim == output.ndim and target.shape[-1] == 1:
        target = squeeze(target, -1)
    if axis != output.ndim - 1:
        from minikeras.ops.array.reshaping import moveaxis

        output = moveaxis(output, axis, -1)
    if from_logits:
        return _softmax.sparse_softmax_cross_entropy(output, target.astype("int64"))
    labels = one_hot(target.astype("int64"), output.shape[-1], dtype=str(output.dtype))
    return categorical_crossentropy(labels, output, False, -1)


def multi_hot(inputs, num_classes=None, axis=-1, dtype=None, sparse=False, **kwargs):
    """Multi-hot encode integer ids: a 1 for each class present in each row (1-D input: one row).

    Keras's definition on every backend: ``one_hot(inputs, num_classes, axis)``
    reduced by max over axis 1 (axis 0 for 1-D input), so ``axis`` places the
    class axis of the one-hot encoding before that reduction.
    """
    from minikeras.ops.nn.embedding import one_hot

    num_classes = kwargs.pop("num_tokens", num_classes)
    if kwargs:
        raise TypeError(f"multi_hot: unexpected keyword arguments {sorted(kwargs)}.")
    if validate_flag("multi_hot", "sparse", sparse):
        raise ValueError("multi_hot: sparse=True is not supported (minikeras has no sparse tensors).")
    if num_classes is None:
        raise ValueError("multi_hot expects num_classes.")
    inputs = _tensor("multi_hot", inputs)
    encoded = one_hot(inputs, num_classes, axis=axis, dtype="float32" if dtype is None else dtype)
    return _max(encoded, 1 if inputs.ndim > 1 else 0)


def psnr(x1, x2, max_val):
    """Peak signal-to-noise ratio ``20 log10(max_val) - 10 log10(mse)`` over all elements."""
    x1, x2 = _tensor("psnr", x1), _tensor("psnr", x2)
    if x1.shape != x2.shape:
        raise ValueError(f"psnr: the inputs must have the same shape, received {x1.shape} and {x2.shape}.")
    max_val = validate_number("psnr", "max_val", max_val)
    if max_val <= 0:
        raise ValueError(f"psnr: max_val must be positive (the largest possible value), received {max_val!r}.")
    difference = x1 - x2
    mse = mean(difference * difference)
    return 20 * math.log10(max_val) - 10 * log(mse) * (1 / math.log(10))
