"""SGD: gradient descent with optional (Nesterov) momentum."""
from minikeras.kernels.optimizer_updates import sgd_reference
from minikeras.optimizers import _fused
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

    _capturable = True  # the learning rate goes through _step_value (optimizers/_step_scalars.py)

    def build(self, variables):
        """Create one momentum slot per variable (none when momentum is 0)."""
        if self.built:
            return
        super().build(variables)
        self.momentums = self.add_optimizer_variables(variables, "momentum") if self.momentum != 0 else []

    def _group(self, gradient, variable):
        """The arrays of ``sgd_update`` for one variable."""
        scaled_gradient, nesterov_step = self.scratch(variable, 2)
        velocity = self.momentums[self.slot_index(variable)] if self.momentum != 0 else None
        return (gradient, velocity, variable.data, scaled_gradient, nesterov_step)

    def _update_variables(self, grads, variables, learning_rate):
        """Every variable in one multi-tensor ``sgd_update`` per device
        (``optimizers/_fused.py``), unless a subclass has its own rule."""
        if _fused.overrides_update_step(self, SGD):
            return super()._update_variables(grads, variables, learning_rate)
        pairs = [(variable.device, self._group(gradient, variable)) for gradient, variable in zip(grads, variables)]
        learning_rate = self._step_value(learning_rate, self._current_learning_rate)
        _fused.update_all("sgd_update", pairs, learning_rate, self.momentum, self.nesterov)

    def update_step(self, gradient, variable, learning_rate):
        """One SGD step on ``variable`` (in place)."""
        sgd_reference(variable.device, [self._group(gradient, variable)], learning_rate, self.momentum, self.nesterov)

    def get_config(self):
        config = super().get_config()
        config.update({"momentum": self.momentum, "nesterov": self.nesterov})
        return config
