"""Batch normalisation (training and inference) and layer normalisation.

Each runs as one fused node of the graph (forward and backward written by
hand) instead of a dozen elementwise ops: the forward keeps only the
normalised input ``x_hat`` and ``1/std`` for backward, and the backward
allocates a single array the size of the input.
"""
import math

import numpy

from minikeras import kernels
from minikeras.backend.dtypes import is_float_dtype
from minikeras.autograd import Function
from minikeras._support.argument_validation import as_tensor, is_int, validate_axis, validate_number

__all__ = ["batch_norm_training", "batch_norm_inference", "layer_norm"]


def _layout(shape, axes):
    """How to view an input of ``shape`` normalised per-feature over ``axes``.

    Returns ``(view_shape, feature_axes_in_view, broadcast_shape)``. When the
    feature axes are the trailing ones, the input is viewed as a matrix
    ``(rows, features)`` (a free reshape) so reductions run over axis 0 or 1
    of a 2-D array, NumPy's fastest case; otherwise the input is used as is.
    """
    ndim = len(shape)
    if list(axes) == list(range(ndim - len(axes), ndim)):
        features = math.prod(shape[a] for a in axes)
        return (-1, features), (1,), (1, features)
    broadcast = tuple(shape[a] if a in axes else 1 for a in range(ndim))
    return None, tuple(axes), broadcast



def _scale_and_shift(xp, x_hat, gamma, beta, broadcast, out):
    """``out = x_hat * gamma + beta`` (either may be None); returns gamma in
    its broadcast shape, which backward needs."""
    if gamma is not None:
        gamma = gamma.reshape(broadcast)
        xp.multiply(x_hat, gamma, out=out)
    else:
        out[...] = x_hat
    if beta is not None:
        out += beta.reshape(broadcast)
    return gamma

class BatchNormTraining(Function):
    """Batch normalisation with batch statistics: forward and backward.

    Inputs ``(x, gamma, beta)``; gamma or beta may be None (scale=False or
    center=False). After forward, ``batch_mean`` and ``batch_variance`` (the
    biased one) hold the statistics for the moving averages.

    Each pass is a kernel of ``minikeras/kernels/batch_norm.py``: on a GPU
    one launch each (statistics and normalisation forward, the sums and the
    input's gradient backward; the reductions deterministic), saving ``x``
    for backward; elsewhere their references, which run over blocks of
    samples shared among the CPU op threads (one block on the simulated
    GPU), save ``x_hat`` and add the blocks' sums in block order, so the
    result has the same bits for any number of threads.
    """

    def __init__(self, axis, epsilon, cross_replica):
        self.axis, self.epsilon, self.cross_replica = axis, epsilon, cross_replica

    def forward(self, x, gamma, beta):
        device = self.device
        self.input_shape = x.shape
        view_shape, feature_axes, broadcast = _layout(x.shape, (self.axis,))
        view = x.reshape(view_shape) if view_shape is not None else x
        axes = self.reduce_axes = tuple(a for a in range(view.ndim) if a not in feature_axes)
        count = self.count = view.size // math.prod(broadcast)
        if self.cross_replica is None:
            mean, variance, inv_std, scratch = kernels.get("batch_norm_statistics", device)(view, axes, count,
                                                                                             self.epsilon)
        else:
            mean, variance = self._global_moments(device.xp, view, count)
            inv_std, scratch = 1.0 / device.xp.sqrt(variance + self.epsilon), None
        gamma = None if gamma is None else gamma.reshape(broadcast)
        beta = None if beta is None else beta.reshape(broadcast)
        out, x_hat = kernels.get("batch_norm_normalize", device)(view, axes, mean, inv_std, gamma, beta, scratch)
        if self.needs_input_grad[0] or self.needs_input_grad[1]:
            # x_hat from the references; x itself from the kernels, which recompute x_hat.
            self.save_for_backward(x_hat, view if x_hat is None else None, mean, inv_std, gamma)
        self.batch_mean, self.batch_variance = mean.reshape(-1), variance.reshape(-1)
        return out.reshape(x.shape)

    def _global_moments(self, xp, view, count):
        """Mean and biased variance over every replica's batch, through the
        ``cross_replica(sum, sum_of_squares, count)`` all-reduce (float64
        sums, so that ``E[x^2] - E[x]^2`` keeps its precision)."""
        wide = view.astype(numpy.float64)
        total = wide.sum(axis=self.reduce_axes, keepdims=True)
        squares = xp.square(wide, out=wide).sum(axis=self.reduce_axes, keepdims=True)
        total, squares, count = self.cross_replica(total, squares, count)
        mean = total / count
        variance = xp.maximum(squares / count - mean * mean, 0.0)
        return mean.astype(view.dtype), variance.astype(view.dtype)

    def backward(self, grad):
        x_hat, x, mean, inv_std, gamma = self.saved
        device = self.device
        needs = self.needs_input_grad
        view = grad.reshape((x_hat if x is None else x).shape)
        grad_beta, grad_gamma, scratch = kernels.get("batch_norm_backward_sums", device)(
            view, x_hat, x, mean, inv_std, self.reduce_axes)
        grad_x = None
        if needs[0]:
            beta_sum, gamma_sum, count = grad_beta, grad_gamma, self.count
            if self.cross_replica is not None:
                # With global statistics every replica's input moves every
                # replica's output: the sums here must be global too.
                beta_sum, gamma_sum, count = self.cross_replica(grad_beta, grad_gamma, count, gradients=True)
            grad_x = kernels.get("batch_norm_backward_input", device)(
                view, x_hat, x, mean, inv_std, gamma, beta_sum, gamma_sum, count, scratch).reshape(self.input_shape)
        return (grad_x,
                grad_gamma.reshape(-1) if needs[1] else None,
                grad_beta.reshape(-1) if needs[2] else None)


class BatchNormInference(Function):
    """``(x - moving_mean) / sqrt(moving_variance + eps) * gamma + beta`` as
    one affine map ``x * scale + shift``. Inputs ``(x, gamma, beta, mean,
    variance)``; only x, gamma and beta get gradients."""

    def __init__(self, axis, epsilon):
        self.axis, self.epsilon = axis, epsilon

    def forward(self, x, gamma, beta, mean, variance):
        xp = self.device.xp
        self.input_shape = x.shape
        view_shape, feature_axes, broadcast = _layout(x.shape, (self.axis,))
        view = x.reshape(view_shape) if view_shape is not None else x
        self.reduce_axes = tuple(a for a in range(view.ndim) if a not in feature_axes)
        self.view_shape = view.shape
        inv_std = (1.0 / xp.sqrt(variance + self.epsilon)).reshape(broadcast)
        mean = mean.reshape(broadcast)
        scale = inv_std if gamma is None else inv_std * gamma.reshape(broadcast)
        shift = -mean * scale
        if beta is not None:
            shift += beta.reshape(broadcast)
        out = view * scale
        out += shift
        needs = self.needs_input_grad
        self.save_for_backward(scale if needs[0] else None, view if needs[1] else None,
                               mean if needs[1] else None, inv_std if needs[1] else None)
        return out.reshape(x.shape)

    def backward(self, grad):
        scale, view, mean, inv_std = self.saved
        needs = self.needs_input_grad
        grad_view = grad.reshape(self.view_shape)
        grad_x = grad_gamma = grad_beta = None
        if needs[0]:
            grad_x = (grad_view * scale).reshape(self.input_shape)
        if needs[1]:
            grad_gamma = (grad_view * ((view - mean) * inv_std)).sum(axis=self.reduce_axes).reshape(-1)
        if needs[2]:
            grad_beta = grad_view.sum(axis=self.reduce_axes).reshape(-1)
        return grad_x, grad_gamma, grad_beta, None, None


class LayerNorm(Function):
    """Per-sample normalisation over ``axes``: forward and backward.

    Inputs ``(x, gamma, beta)`` (gamma/beta may be None), parameters shaped
    like the normalised axes.
    """

    def __init__(self, axes, epsilon):
        self.axes, self.epsilon = axes, epsilon

    def forward(self, x, gamma, beta):
        xp = self.device.xp
        self.input_shape = x.shape
        view_shape, norm_axes, broadcast = _layout(x.shape, self.axes)
        view = x.reshape(view_shape) if view_shape is not None else x
        self.norm_axes = norm_axes
        self.batch_axes = tuple(a for a in range(view.ndim) if a not in norm_axes)
        self.broadcast = broadcast
        mean = view.mean(axis=norm_axes, keepdims=True)
        x_hat = view - mean
        out = xp.square(x_hat)
        variance = out.mean(axis=norm_axes, keepdims=True)
        inv_std = 1.0 / xp.sqrt(variance + self.epsilon)
        x_hat *= inv_std
        gamma = _scale_and_shift(xp, x_hat, gamma, beta, broadcast, out)
        if self.needs_input_grad[0] or self.needs_input_grad[1]:
            self.save_for_backward(x_hat, inv_std, gamma)
        return out.reshape(x.shape)

    def backward(self, grad):
        x_hat, inv_std, gamma = self.saved
        xp = self.device.xp
        needs = self.needs_input_grad
        view = grad.reshape(x_hat.shape)
        grad_beta = view.sum(axis=self.batch_axes).reshape(-1) if needs[2] else None
        work = xp.multiply(view, x_hat)
        grad_gamma = work.sum(axis=self.batch_axes).reshape(-1) if needs[1] else None
        grad_x = None
        if needs[0]:
            # dx = inv_std * (h - mean(h) - x_hat * mean(h * x_hat)), h = g * gamma
            scaled = view if gamma is None else view * gamma
            if gamma is not None:
                xp.multiply(scaled, x_hat, out=work)
            projection = work.mean(axis=self.norm_axes, keepdims=True)
            xp.multiply(x_hat, projection, out=work)
            xp.subtract(scaled, work, out=work)
            work -= scaled.mean(axis=self.norm_axes, keepdims=True)
            work *= inv_std
            grad_x = work.reshape(self.input_shape)
        return grad_x, grad_gamma, grad_beta



def _parameter(op_name, value, size, name):
    if value is None:
        return None
    value = as_tensor(op_name, value, allow_bool=False, allow_complex=False)
    if value.size != size:
        raise ValueError(f"{op_name}: {name} must have {size} elements (one per normalised feature), "
                         f"received shape {tuple(value.shape)}.")
    return value


def _float_x(op_name, x):
    x = as_tensor(op_name, x, allow_bool=False, allow_complex=False)
    if not is_float_dtype(x.dtype):
        raise TypeError(f"{op_name} expects a floating-point x, received dtype {x.dtype}.")
    return x


def _feature_axis(op_name, x, axis):
    if not is_int(axis):
        validate_axis(op_name, axis, x.ndim)  # the TypeError naming what was received
    if not -x.ndim <= axis < x.ndim or axis % x.ndim == 0:
        raise ValueError(f"{op_name}: axis {axis} must be a non-batch axis of x with shape {tuple(x.shape)}.")
    return axis % x.ndim


def batch_norm_training(x, gamma, beta, axis, epsilon, cross_replica=None):
    """Normalise each feature along ``axis`` with the batch's mean and biased
    variance, then scale by ``gamma`` and shift by ``beta``.

    Args:
        x: a float Tensor ``(batch, ...)``.
        gamma, beta: Tensors with one element per feature, or None.
        axis: the feature axis (not the batch axis).
        epsilon: added to the variance.
        cross_replica: optional all-reduce ``(sum, sum_of_squares, count) ->
            (sum, sum_of_squares, count)`` making the statistics global
            (see BatchNormalization).

    Returns:
        ``(output, batch_mean, batch_variance)``: the statistics as raw
        device arrays ``(features,)``, outside the graph, for the caller's
        moving averages.
    """
    x = _float_x("batch_norm_training", x)
    axis = _feature_axis("batch_norm_training", x, axis)
    gamma = _parameter("batch_norm_training", gamma, x.shape[axis], "gamma")
    beta = _parameter("batch_norm_training", beta, x.shape[axis], "beta")
    function = BatchNormTraining(axis, validate_number("batch_norm_training", "epsilon", epsilon), cross_replica)
    output = function.apply(x, gamma, beta)
    mean, variance = function.batch_mean, function.batch_variance
    del function.batch_mean, function.batch_variance
    return output, mean, variance


def batch_norm_inference(x, gamma, beta, mean, variance, axis, epsilon):
    """``(x - mean) / sqrt(variance + epsilon) * gamma + beta`` per feature
    along ``axis``; gradients flow to x, gamma and beta only.

    Args:
        x: a float Tensor ``(batch, ...)``.
        gamma, beta: Tensors with one element per feature, or None.
        mean, variance: Tensors with one element per feature.
        axis: the feature axis; epsilon: added to the variance.
    """
    x = _float_x("batch_norm_inference", x)
    axis = _feature_axis("batch_norm_inference", x, axis)
    size = x.shape[axis]
    return BatchNormInference(axis, validate_number("batch_norm_inference", "epsilon", epsilon)).apply(
        x, _parameter("batch_norm_inference", gamma, size, "gamma"),
        _parameter("batch_norm_inference", beta, size, "beta"),
        _parameter("batch_norm_inference", mean, size, "mean"),
        _parameter("batch_norm_inference", variance, size, "variance"))


def layer_norm(x, gamma, beta, axes, epsilon):
    """Normalise each sample over ``axes`` (mean 0, variance 1), then scale
    by ``gamma`` and shift by ``beta`` (shaped like the normalised axes).

    Args:
        x: a float Tensor ``(batch, ...)``.
        gamma, beta: Tensors shaped like the normalised axes, or None.
        axes: the normalised axes (non-batch), an int or a sequence.
        epsilon: added to the variance.
    """
    x = _float_x("layer_norm", x)
    if is_int(axes):
        axes = (axes,)
    elif not isinstance(axes, (tuple, list)):
        raise TypeError(f"layer_norm: axes must be an int or a tuple of ints, received {type(axes).__name__} "
                        f"{axes!r}.")
    axes = tuple(sorted({_feature_axis("layer_norm", x, a) for a in axes}))
    size = math.prod(x.shape[a] for a in axes)
    epsilon = validate_number("layer_norm", "epsilon", epsilon)
    return LayerNorm(axes, epsilon).apply(x, _parameter("layer_norm", gamma, size, "gamma"),
                                          _parameter("layer_norm", beta, size, "beta"))
