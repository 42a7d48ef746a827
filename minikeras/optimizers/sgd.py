"""SGD: gradient descent with optional (Nesterov) momentum."""
from minikeras.optimizers._checks import check_float_in_range
from minikeras.optimizers.optimizer import Optimizer


class SGD(Optimizer):
    """Gradient descent with momentum (Keras 3 update rule).

    Without momentum: ``w -= lr * g``. With momentum::

        velocity = momentum * velocity - lr * g
        w += velocity                                  # nesterov=False
        w += momentum * velocity - lr * g              # nesterov=True

    Args:
        learning_rate: a float, a LearningRateSchedule or a callable.
        momentum: in [0, 1]; 0 is plain gradient descent (no state kept).
        nesterov: use Nesterov momentum.
        **kwargs: the base Optimizer arguments (clipnorm, clipvalue,
            global_clipnorm, weight_decay, use_ema, name, ...).

    Example:
        >>> import numpy, minikeras as mk
        >>> w = mk.Tensor(numpy.array([1.0, 2.0]), requires_grad=True)
        >>> SGD(learning_rate=0.1).apply_gradients([(numpy.array([1.0, 1.0]), w)])
        1
        >>> w.numpy()
        array([0.9, 1.9])
    """

    def __init__(self, learning_rate=0.01, momentum=0.0, nesterov=False, name="SGD", **kwargs):
        super().__init__(learning_rate=learning_rate, name=name, **kwargs)
        check_float_in_range("SGD", "momentum", momentum, low=0.0, high=1.0)
        self.momentum = momentum
        self.nesterov = bool(nesterov)

    def build(self, variables):
        """Create one momentum slot per variable (none when momentum is 0)."""
        if self.built:
            return
        super().build(variables)
        self.momentums = self.add_optimizer_variables(variables, "momentum") if self.momentum != 0 else []

    def update_step(self, gradient, variable, learning_rate):
        """One SGD step on ``variable`` (in place)."""
        weights = variable.data
        xp = variable.device.xp
        scaled_gradient, nesterov_step = self.scratch(variable, 2)
        xp.multiply(gradient, learning_rate, out=scaled_gradient)
        if self.momentum == 0:
            weights -= scaled_gradient
            return
        velocity = self.momentums[self.slot_index(variable)]
        velocity *= self.momentum
        velocity -= scaled_gradient
        if self.nesterov:
            xp.multiply(velocity, self.momentum, out=nesterov_step)
            nesterov_step -= scaled_gradient
            weights += nesterov_step
        else:
            weights += velocity

    def get_config(self):
        config = super().get_config()
        config.update({"momentum": self.momentum, "nesterov": self.nesterov})
        return config
