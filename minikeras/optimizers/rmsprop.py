"""RMSprop: divide the gradient by a running root mean square (Hinton, 2012)."""
from minikeras.kernels.optimizer_updates import rmsprop_reference
from minikeras.optimizers import _fused
from minikeras.optimizers._checks import check_float_in_range
from minikeras.optimizers.optimizer import Optimizer


class RMSprop(Optimizer):
    """RMSprop with plain momentum and an optional centered variant (Keras 3)::

        v = rho * v + (1 - rho) * g**2
        a = rho * a + (1 - rho) * g                  # centered only
        denominator = v - a**2 + eps  if centered else  v + eps
        increment = lr * g / sqrt(denominator)
        mom = momentum * mom + increment; w -= mom  # momentum > 0
        w -= increment                              # momentum == 0

    Note epsilon sits inside the square root, as in Keras.

    Args:
        learning_rate: a float, a LearningRateSchedule or a callable.
        rho: discount of the running averages, in [0, 1].
        momentum: in [0, 1]; 0 keeps no momentum state.
        epsilon: small constant for numerical stability (>= 0).
        centered: normalize by the estimated variance instead of the second
            moment.
        **kwargs: the base Optimizer arguments.

    Example:
        >>> import numpy, minikeras as mk
        >>> w = mk.Tensor(numpy.array([10.0]), requires_grad=True)
        >>> RMSprop(learning_rate=0.1).apply_gradients([(w.numpy().copy(), w)])
        1
        >>> w.numpy().round(6)
        array([9.683772])
    """

    def __init__(self, learning_rate=0.001, rho=0.9, momentum=0.0, epsilon=1e-7, centered=False, name="rmsprop",
                 **kwargs):
        super().__init__(learning_rate=learning_rate, name=name, **kwargs)
        check_float_in_range("RMSprop", "rho", rho, low=0.0, high=1.0)
        check_float_in_range("RMSprop", "momentum", momentum, low=0.0, high=1.0)
        check_float_in_range("RMSprop", "epsilon", epsilon, low=0.0)
        self.rho = rho
        self.momentum = momentum
        self.epsilon = epsilon
        self.centered = bool(centered)

    _capturable = True  # the learning rate goes through _step_value (optimizers/_step_scalars.py)

    def build(self, variables):
        """Create the velocity slots, plus momentum and average_gradient ones
        when momentum > 0 / centered."""
        if self.built:
            return
        super().build(variables)
        self._velocities = self.add_optimizer_variables(variables, "velocity")
        self._momentums = self.add_optimizer_variables(variables, "momentum") if self.momentum > 0 else []
        self._average_gradients = (
            self.add_optimizer_variables(variables, "average_gradient") if self.centered else []
        )

    def _group(self, gradient, variable):
        """The arrays of ``rmsprop_update`` for one variable."""
        index = self.slot_index(variable)
        work, increment = self.scratch(variable, 2)
        average = self._average_gradients[index] if self.centered else None
        momentum = self._momentums[index] if self.momentum > 0 else None
        return (gradient, self._velocities[index], average, momentum, variable.data, work, increment)

    def _update_variables(self, grads, variables, learning_rate):
        """Every variable in one multi-tensor ``rmsprop_update`` per device
        (``optimizers/_fused.py``), unless a subclass has its own rule."""
        if _fused.overrides_update_step(self, RMSprop):
            return super()._update_variables(grads, variables, learning_rate)
        pairs = [(variable.device, self._group(gradient, variable)) for gradient, variable in zip(grads, variables)]
        learning_rate = self._step_value(learning_rate, self._current_learning_rate)
        _fused.update_all("rmsprop_update", pairs, learning_rate, self.rho, self.epsilon, self.momentum)

    def update_step(self, gradient, variable, learning_rate):
        """One RMSprop step on ``variable`` (in place)."""
        rmsprop_reference(variable.device, [self._group(gradient, variable)], learning_rate, self.rho, self.epsilon,
                          self.momentum)

    def get_config(self):
        config = super().get_config()
        config.update({"rho": self.rho, "momentum": self.momentum, "epsilon": self.epsilon, "centered": self.centered})
        return config
