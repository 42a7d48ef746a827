"""Normalization layers: BatchNormalization and LayerNormalization.

Both run as one fused node of the graph (forward and backward written by
hand) instead of a dozen elementwise ops: the forward keeps only the
normalised input ``x_hat`` and ``1/std`` for backward, and the backward
allocates a single array the size of the input.

BatchNormalization follows Keras: in training (``training=True`` and the
layer trainable) it normalises with the batch mean and biased variance and
updates, in place and outside the graph,
``moving = moving * momentum + batch_statistic * (1 - momentum)`` with the
same biased variance (as Keras 3 does: checked against Keras 3.15 on
TensorFlow 2.21); otherwise it uses the moving statistics.
"""
import math

import numpy

from minikeras import constraints, initializers, regularizers
from minikeras.autograd import Function
from minikeras.backend import threads
from minikeras.layers.base import Layer, walk_layers
from minikeras.layers.input_spec import InputSpec

__all__ = ["BatchNormalization", "LayerNormalization"]


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

class _BatchNormTraining(Function):
    """Batch normalisation with batch statistics: forward and backward.

    Inputs ``(x, gamma, beta)``; gamma or beta may be None (scale=False or
    center=False). After forward, ``batch_mean`` and ``batch_variance`` (the
    biased one) hold the statistics for the moving averages.

    Every pass runs over blocks of samples shared among the CPU op threads
    (one block on a GPU). The blocks depend only on the input's size and
    their sums are added in block order, so the result has the same bits
    for any number of threads.
    """

    def __init__(self, axis, epsilon, cross_replica):
        self.axis, self.epsilon, self.cross_replica = axis, epsilon, cross_replica

    @staticmethod
    def _blocks(xp, function, view):
        """``function(start, stop)`` over blocks of samples (axis 0, always a
        reduced axis: BatchNormalization refuses axis 0)."""
        return threads.row_blocks(xp, function, view.shape[0], view.size)

    def forward(self, x, gamma, beta):
        xp = self.device.xp
        self.input_shape = x.shape
        view_shape, feature_axes, broadcast = _layout(x.shape, (self.axis,))
        view = x.reshape(view_shape) if view_shape is not None else x
        axes = self.reduce_axes = tuple(a for a in range(view.ndim) if a not in feature_axes)
        self.broadcast = broadcast
        count = self.count = view.size // math.prod(broadcast)
        variance = None
        if self.cross_replica is None:
            sums = self._blocks(xp, lambda start, stop: view[start:stop].sum(axis=axes, keepdims=True), view)
            mean = threads.sum_in_order(xp, sums)
            mean /= count
        else:
            mean, variance = self._global_moments(xp, view, count)
        x_hat, out = xp.empty_like(view), xp.empty_like(view)

        def centre(start, stop):
            centered = xp.subtract(view[start:stop], mean, out=x_hat[start:stop])
            if variance is None:
                return xp.multiply(centered, centered, out=out[start:stop]).sum(axis=axes, keepdims=True)
            return None

        squares = self._blocks(xp, centre, view)
        if variance is None:
            variance = threads.sum_in_order(xp, squares)
            variance /= count
        inv_std = 1.0 / xp.sqrt(variance + self.epsilon)

        def finish(start, stop):
            block = x_hat[start:stop]
            block *= inv_std
            return _scale_and_shift(xp, block, gamma, beta, broadcast, out[start:stop])

        gamma = self._blocks(xp, finish, view)[0]
        if self.needs_input_grad[0] or self.needs_input_grad[1]:
            self.save_for_backward(x_hat, inv_std, gamma)
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
        x_hat, inv_std, gamma = self.saved
        xp = self.device.xp
        needs = self.needs_input_grad
        axes = self.reduce_axes
        view = xp.ascontiguousarray(grad).reshape(x_hat.shape)
        work = xp.empty_like(view)

        def sums(start, stop):
            block = view[start:stop]
            product = xp.multiply(block, x_hat[start:stop], out=work[start:stop])
            return block.sum(axis=axes, keepdims=True), product.sum(axis=axes, keepdims=True)

        parts = self._blocks(xp, sums, view)
        grad_beta = threads.sum_in_order(xp, [part[0] for part in parts])
        grad_gamma = threads.sum_in_order(xp, [part[1] for part in parts])
        grad_x = None
        if needs[0]:
            beta_sum, gamma_sum, count = grad_beta, grad_gamma, self.count
            if self.cross_replica is not None:
                # With global statistics every replica's input moves every
                # replica's output: the sums here must be global too.
                beta_sum, gamma_sum, count = self.cross_replica(grad_beta, grad_gamma, count)
            scale = inv_std if gamma is None else inv_std * gamma
            gamma_mean, beta_mean = gamma_sum * (1.0 / count), beta_sum * (1.0 / count)

            def input_gradient(start, stop):
                # dx = scale * (g - mean(g) - x_hat * mean(g * x_hat))
                block = work[start:stop]
                xp.multiply(x_hat[start:stop], gamma_mean, out=block)
                xp.subtract(view[start:stop], block, out=block)
                block -= beta_mean
                block *= scale

            self._blocks(xp, input_gradient, view)
            grad_x = work.reshape(self.input_shape)
        return (grad_x,
                grad_gamma.reshape(-1) if needs[1] else None,
                grad_beta.reshape(-1) if needs[2] else None)


class _BatchNormInference(Function):
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


def batch_norm_layers(model):
    """The BatchNormalization layers of ``model`` (anything offering the
    ``_cross_replica_stats`` hook and moving statistics)."""
    return [layer for layer in walk_layers(model)
            if hasattr(layer, "_cross_replica_stats") and getattr(layer, "moving_mean", None) is not None]


def moving_statistics(model):
    """``[(weight, copy of its value)]`` for the moving statistics of every
    BatchNormalization layer in ``model``: what a failed training step must
    put back, since the forward pass updates them in place."""
    return [(weight, weight.device.copy_array(weight.data)) for layer in batch_norm_layers(model)
            for weight in (layer.moving_mean, layer.moving_variance)]


def _check_epsilon(class_name, epsilon):
    if isinstance(epsilon, bool) or not isinstance(epsilon, (int, float)) or not 0 < epsilon < float("inf"):
        raise ValueError(f"{class_name}: epsilon must be a positive finite number, received epsilon={epsilon!r}.")
    return float(epsilon)


class BatchNormalization(Layer):
    """Normalise each feature with batch statistics in training and moving
    statistics in inference, then scale by ``gamma`` and shift by ``beta``.

    Weights, in Keras order: gamma, beta (trainable), moving_mean,
    moving_variance (non-trainable, updated in place during training).

    Args:
        axis: the feature axis (default -1, channels_last).
        momentum: of the moving averages (Keras default 0.99).
        epsilon: added to the variance (Keras default 1e-3).
        center: learn ``beta``; scale: learn ``gamma``.
        beta_initializer, gamma_initializer, moving_mean_initializer,
        moving_variance_initializer: Keras defaults zeros, ones, zeros, ones.
        beta_regularizer, gamma_regularizer, beta_constraint,
        gamma_constraint: optional.
        synchronized: accepted (as Keras); statistics are global across
            replicas whenever ``_cross_replica_stats`` is set (below).
        **kwargs: base Layer arguments.

    Data-parallel hook: ``layer._cross_replica_stats``, None by default,
    may be set to a callable ``(sum, sum_of_squares, count) -> (sum,
    sum_of_squares, count)`` that all-reduces (sums) its arguments across
    replicas; the batch statistics are then those of the global batch. It
    is called once in forward (per-feature sums of x and x**2, and the
    sample count) and once in backward (per-feature sums of the output
    gradient and of gradient * x_hat, and the count), in the same order on
    every replica. The backward reduction is exact when each replica's
    output gradient is that of the global loss.

    Note: a layer with ``trainable=False`` always runs in inference mode
    (Keras' rule for fine-tuning).
    """

    def __init__(self, axis=-1, momentum=0.99, epsilon=1e-3, center=True, scale=True, beta_initializer="zeros",
                 gamma_initializer="ones", moving_mean_initializer="zeros", moving_variance_initializer="ones",
                 beta_regularizer=None, gamma_regularizer=None, beta_constraint=None, gamma_constraint=None,
                 synchronized=False, **kwargs):
        super().__init__(**kwargs)
        if isinstance(axis, bool) or not isinstance(axis, (int, numpy.integer)):
            raise TypeError(f"BatchNormalization: axis must be an int, received axis={axis!r}.")
        self.axis = int(axis)
        if isinstance(momentum, bool) or not isinstance(momentum, (int, float)) or not 0 <= momentum <= 1:
            raise ValueError(f"BatchNormalization: momentum must be a number in [0, 1], received {momentum!r}.")
        self.momentum = float(momentum)
        self.epsilon = _check_epsilon("BatchNormalization", epsilon)
        self.center, self.scale = bool(center), bool(scale)
        self.beta_initializer = initializers.get(beta_initializer)
        self.gamma_initializer = initializers.get(gamma_initializer)
        self.moving_mean_initializer = initializers.get(moving_mean_initializer)
        self.moving_variance_initializer = initializers.get(moving_variance_initializer)
        self.beta_regularizer = regularizers.get(beta_regularizer)
        self.gamma_regularizer = regularizers.get(gamma_regularizer)
        self.beta_constraint = constraints.get(beta_constraint)
        self.gamma_constraint = constraints.get(gamma_constraint)
        self.synchronized = bool(synchronized)
        self._cross_replica_stats = None
        self.gamma = self.beta = self.moving_mean = self.moving_variance = None

    def build(self, input_shape):
        ndim = len(input_shape)
        if not -ndim <= self.axis < ndim:
            raise ValueError(
                f"Layer '{self.name}': axis {self.axis} is out of range for inputs of rank {ndim} "
                f"(shape {tuple(input_shape)})."
            )
        axis = self.axis % ndim
        if axis == 0 or input_shape[axis] is None or input_shape[axis] == 0:
            raise ValueError(
                f"Layer '{self.name}': the normalised axis {self.axis} must be a known, non-empty, non-batch axis; "
                f"received input shape {tuple(input_shape)}."
            )
        shape = (input_shape[axis],)
        if self.scale:
            self.gamma = self.add_weight("gamma", shape, initializer=self.gamma_initializer,
                                         regularizer=self.gamma_regularizer, constraint=self.gamma_constraint)
        if self.center:
            self.beta = self.add_weight("beta", shape, initializer=self.beta_initializer,
                                        regularizer=self.beta_regularizer, constraint=self.beta_constraint)
        self.moving_mean = self.add_weight("moving_mean", shape, initializer=self.moving_mean_initializer,
                                           trainable=False)
        self.moving_variance = self.add_weight("moving_variance", shape,
                                               initializer=self.moving_variance_initializer, trainable=False)
        self._axis = axis
        self.input_spec = InputSpec(ndim=ndim, axes={self.axis: input_shape[axis]})
        self.built = True

    def call(self, inputs, training=None):
        if inputs.dtype.kind != "f":
            raise TypeError(f"Layer '{self.name}' expects floating-point inputs, received dtype {inputs.dtype}.")
        if training and self.trainable:
            function = _BatchNormTraining(self._axis, self.epsilon, self._cross_replica_stats)
            outputs = function.apply(inputs, self.gamma, self.beta)
            self._update_moving_statistics(function.batch_mean, function.batch_variance)
            del function.batch_mean, function.batch_variance
            return outputs
        function = _BatchNormInference(self._axis, self.epsilon)
        return function.apply(inputs, self.gamma, self.beta, self.moving_mean, self.moving_variance)

    def _update_moving_statistics(self, mean, variance):
        # In place, outside the graph: the moving statistics are state, not
        # a function of the weights.
        for weight, batch_value in ((self.moving_mean, mean), (self.moving_variance, variance)):
            moving = weight.data
            with weight.device.activate():
                moving *= self.momentum
                moving += batch_value.astype(moving.dtype, copy=False) * (1.0 - self.momentum)

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)

    def get_config(self):
        return {
            **super().get_config(),
            "axis": self.axis,
            "momentum": self.momentum,
            "epsilon": self.epsilon,
            "center": self.center,
            "scale": self.scale,
            "beta_initializer": initializers.serialize(self.beta_initializer),
            "gamma_initializer": initializers.serialize(self.gamma_initializer),
            "moving_mean_initializer": initializers.serialize(self.moving_mean_initializer),
            "moving_variance_initializer": initializers.serialize(self.moving_variance_initializer),
            "beta_regularizer": regularizers.serialize(self.beta_regularizer),
            "gamma_regularizer": regularizers.serialize(self.gamma_regularizer),
            "beta_constraint": constraints.serialize(self.beta_constraint),
            "gamma_constraint": constraints.serialize(self.gamma_constraint),
            "synchronized": self.synchronized,
        }


class _LayerNorm(Function):
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


class LayerNormalization(Layer):
    """Normalise each sample over ``axis`` (mean 0, variance 1), then scale
    by ``gamma`` and shift by ``beta`` (shaped like the normalised axes).

    Args:
        axis: an int or a list of ints (default -1, the features).
        epsilon: added to the variance (Keras default 1e-3).
        center: learn ``beta``; scale: learn ``gamma``.
        beta_initializer, gamma_initializer: Keras defaults zeros, ones.
        beta_regularizer, gamma_regularizer, beta_constraint,
        gamma_constraint: optional.
        **kwargs: base Layer arguments.
    """

    def __init__(self, axis=-1, epsilon=1e-3, center=True, scale=True, beta_initializer="zeros",
                 gamma_initializer="ones", beta_regularizer=None, gamma_regularizer=None, beta_constraint=None,
                 gamma_constraint=None, **kwargs):
        super().__init__(**kwargs)
        if isinstance(axis, (list, tuple)):
            if not axis or not all(isinstance(a, (int, numpy.integer)) and not isinstance(a, bool) for a in axis):
                raise TypeError(f"LayerNormalization: axis must be an int or a list of ints, received {axis!r}.")
            self.axis = [int(a) for a in axis]
        elif isinstance(axis, (int, numpy.integer)) and not isinstance(axis, bool):
            self.axis = int(axis)
        else:
            raise TypeError(f"LayerNormalization: axis must be an int or a list of ints, received {axis!r}.")
        self.epsilon = _check_epsilon("LayerNormalization", epsilon)
        self.center, self.scale = bool(center), bool(scale)
        self.beta_initializer = initializers.get(beta_initializer)
        self.gamma_initializer = initializers.get(gamma_initializer)
        self.beta_regularizer = regularizers.get(beta_regularizer)
        self.gamma_regularizer = regularizers.get(gamma_regularizer)
        self.beta_constraint = constraints.get(beta_constraint)
        self.gamma_constraint = constraints.get(gamma_constraint)
        self.gamma = self.beta = None

    def build(self, input_shape):
        ndim = len(input_shape)
        axes = self.axis if isinstance(self.axis, list) else [self.axis]
        for a in axes:
            if not -ndim <= a < ndim or a % ndim == 0:
                raise ValueError(
                    f"Layer '{self.name}': axis {a} cannot be normalised for inputs of shape {tuple(input_shape)} "
                    "(out of range, or the batch axis)."
                )
        axes = sorted({a % ndim for a in axes})
        if len(axes) != len(self.axis if isinstance(self.axis, list) else [self.axis]):
            raise ValueError(f"Layer '{self.name}': repeated axis in axis={self.axis}.")
        if any(input_shape[a] is None or input_shape[a] == 0 for a in axes):
            raise ValueError(
                f"Layer '{self.name}': the normalised axes {axes} must have known, non-zero sizes; "
                f"received input shape {tuple(input_shape)}."
            )
        shape = tuple(input_shape[a] for a in axes)
        if self.scale:
            self.gamma = self.add_weight("gamma", shape, initializer=self.gamma_initializer,
                                         regularizer=self.gamma_regularizer, constraint=self.gamma_constraint)
        if self.center:
            self.beta = self.add_weight("beta", shape, initializer=self.beta_initializer,
                                        regularizer=self.beta_regularizer, constraint=self.beta_constraint)
        self._axes = tuple(axes)
        self.input_spec = InputSpec(ndim=ndim, axes={a: input_shape[a] for a in axes})
        self.built = True

    def call(self, inputs):
        if inputs.dtype.kind != "f":
            raise TypeError(f"Layer '{self.name}' expects floating-point inputs, received dtype {inputs.dtype}.")
        return _LayerNorm(self._axes, self.epsilon).apply(inputs, self.gamma, self.beta)

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)

    def get_config(self):
        return {
            **super().get_config(),
            "axis": self.axis,
            "epsilon": self.epsilon,
            "center": self.center,
            "scale": self.scale,
            "beta_initializer": initializers.serialize(self.beta_initializer),
            "gamma_initializer": initializers.serialize(self.gamma_initializer),
            "beta_regularizer": regularizers.serialize(self.beta_regularizer),
            "gamma_regularizer": regularizers.serialize(self.gamma_regularizer),
            "beta_constraint": constraints.serialize(self.beta_constraint),
            "gamma_constraint": constraints.serialize(self.gamma_constraint),
        }
