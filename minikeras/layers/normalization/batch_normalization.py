"""keras.layers.BatchNormalization (moving statistics updated in
training, Keras's momentum and fused math).
"""
import numpy

from minikeras import initializers, ops
from minikeras.backend.dtypes import is_float_dtype
from minikeras.layers.base import Layer
from minikeras.layers.input_spec import InputSpec
from minikeras.layers.normalization.scale_shift import (add_scale_shift_weights, in_compute_dtype, in_statistics_dtype,
                                                        scale_shift_config, set_scale_shift_arguments)
from minikeras.layers.state_updates import update_state

__all__ = ["BatchNormalization"]


def _check_epsilon(class_name, epsilon):
    if isinstance(epsilon, bool) or not isinstance(epsilon, (int, float)) or not 0 < epsilon < float("inf"):
        raise ValueError(f"{class_name}: epsilon must be a positive finite number, received epsilon={epsilon!r}.")
    return float(epsilon)


class BatchNormalization(Layer):
    """Normalise each feature with batch statistics in training and moving
    statistics in inference, then scale by ``gamma`` and shift by ``beta``.

    Weights, in Keras order: gamma, beta (trainable), moving_mean,
    moving_variance (non-trainable, updated by training steps that succeed).

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
    may be set to a callable ``(sum, sum_of_squares, count, gradients=False)
    -> (sum, sum_of_squares, count)`` that all-reduces (sums) its arguments
    across replicas; the batch statistics are then those of the global
    batch. It is called once in forward (per-feature sums of x and x**2, and
    the sample count) and once in backward with ``gradients=True``
    (per-feature sums of the output gradient and of gradient * x_hat, and
    the count), in the same order on every replica. Each replica's output
    gradient is that of its own loss; the hook weights the gradient sums by
    the replicas' shares of the global loss (distribute/batch_norm_sync.py).

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
        set_scale_shift_arguments(self, center, scale, beta_initializer, gamma_initializer, beta_regularizer,
                                  gamma_regularizer, beta_constraint, gamma_constraint)
        self.moving_mean_initializer = initializers.get(moving_mean_initializer)
        self.moving_variance_initializer = initializers.get(moving_variance_initializer)
        self.synchronized = bool(synchronized)
        self._cross_replica_stats = None
        self.moving_mean = self.moving_variance = None

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
        add_scale_shift_weights(self, shape)
        # Replicas of a data-parallel step combine their changes as a mean
        # weighted by their rows (state_updates.py): the global batch's.
        self.moving_mean = self.add_weight("moving_mean", shape, initializer=self.moving_mean_initializer,
                                           trainable=False, autocast=False, aggregation="mean")
        self.moving_variance = self.add_weight("moving_variance", shape,
                                               initializer=self.moving_variance_initializer, trainable=False,
                                               autocast=False, aggregation="mean")
        self._axis = axis
        self.input_spec = InputSpec(ndim=ndim, axes={self.axis: input_shape[axis]})
        self.built = True

    def call(self, inputs, training=None):
        if not is_float_dtype(inputs.dtype):
            raise TypeError(f"Layer '{self.name}' expects floating-point inputs, received dtype {inputs.dtype}.")
        inputs = in_statistics_dtype(inputs)
        if training and self.trainable:
            outputs, mean, variance = ops.batch_norm_training(inputs, self.gamma, self.beta, self._axis,
                                                              self.epsilon, self._cross_replica_stats)
            self._update_moving_statistics(mean, variance)
            return in_compute_dtype(self, outputs)
        outputs = ops.batch_norm_inference(inputs, self.gamma, self.beta, self.moving_mean, self.moving_variance,
                                           self._axis, self.epsilon)
        return in_compute_dtype(self, outputs)

    def _update_moving_statistics(self, mean, variance):
        # New values, not writes: the moving statistics are state, not a
        # function of the weights, and change only when the step succeeds
        # (see state_updates.py).
        for weight, batch_value in ((self.moving_mean, mean), (self.moving_variance, variance)):
            moving = weight.data
            with weight.device.activate():
                new = moving * self.momentum
                new += batch_value.astype(moving.dtype, copy=False) * (1.0 - self.momentum)
            update_state(weight, new)

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)

    def get_config(self):
        return {
            **super().get_config(),
            "axis": self.axis,
            "momentum": self.momentum,
            "epsilon": self.epsilon,
            **scale_shift_config(self),
            "moving_mean_initializer": initializers.serialize(self.moving_mean_initializer),
            "moving_variance_initializer": initializers.serialize(self.moving_variance_initializer),
            "synchronized": self.synchronized,
        }
