"""Adam: adaptive moment estimation (Kingma & Ba, 2014)."""
import math

from minikeras.kernels.optimizer_updates import adam_math
from minikeras.optimizers import _fused
from minikeras.optimizers._checks import moment_config, set_moment_arguments
from minikeras.optimizers.optimizer import Optimizer

class Adam(Optimizer):
    """Adam, with the Keras 3 update rule (epsilon outside the square root,
    bias correction folded into the step size)::

        t = iterations + 1
        lr_t = lr * sqrt(1 - beta_2**t) / (1 - beta_1**t)
        m += (g - m) * (1 - beta_1)
        v += (g**2 - v) * (1 - beta_2)
        v_hat = max(v_hat, v)                         # amsgrad only
        w -= lr_t * m / (sqrt(v or v_hat) + epsilon)

    Args:
        learning_rate: a float, a LearningRateSchedule or a callable.
        beta_1: decay rate of the first moment, in [0, 1].
        beta_2: decay rate of the second moment, in [0, 1].
        epsilon: small constant for numerical stability (>= 0).
        amsgrad: use the AMSGrad variant (keeps the running max of v).
        **kwargs: the base Optimizer arguments (clipnorm, clipvalue,
            global_clipnorm, weight_decay, use_ema, name, ...).

    Example:
        >>> import numpy, minikeras as mk
        >>> w = mk.Tensor(numpy.array([1.0]), requires_grad=True)
        >>> Adam(learning_rate=0.1).apply_gradients([(numpy.array([3.0]), w)])
        1
        >>> w.numpy().round(6)   # the first Adam step moves by ~lr
        array([0.9])
    """

    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7, amsgrad=False, name="adam",
                 **kwargs):
        super().__init__(learning_rate=learning_rate, name=name, **kwargs)
        set_moment_arguments(self, beta_1, beta_2, epsilon)
        self.amsgrad = bool(amsgrad)

    _capturable = True  # alpha goes through _step_value (optimizers/_step_scalars.py)

    def build(self, variables):
        """Create the momentum and velocity slots (and velocity_hat with amsgrad)."""
        if self.built:
            return
        super().build(variables)
        self._momentums, self._velocities = self.add_optimizer_variables(variables, ["momentum", "velocity"])
        self._velocity_hats = self.add_optimizer_variables(variables, "velocity_hat") if self.amsgrad else []

    def _alpha(self, learning_rate):
        """The step size with both bias corrections folded in (a host float)."""
        step = self.iterations + 1
        return learning_rate * math.sqrt(1.0 - self.beta_2**step) / (1.0 - self.beta_1**step)

    def _group(self, gradient, variable):
        """The arrays of ``adam_update`` for one variable."""
        index = self.slot_index(variable)
        work, update = self.scratch(variable, 2)
        velocity_hat = self._velocity_hats[index] if self.amsgrad else None
        return (gradient, self._momentums[index], self._velocities[index], velocity_hat, variable.data, work, update)

    def _update_variables(self, grads, variables, learning_rate):
        """Every variable in one multi-tensor ``adam_update`` per device
        (``optimizers/_fused.py``), unless a subclass has its own rule."""
        if _fused.overrides_update_step(self, Adam):
            return super()._update_variables(grads, variables, learning_rate)
        pairs = [(variable.device, self._group(gradient, variable)) for gradient, variable in zip(grads, variables)]
        alpha = self._step_value(self._alpha(learning_rate), lambda: self._alpha(self._current_learning_rate()))
        _fused.update_all("adam_update", pairs, alpha, self.beta_1, self.beta_2, self.epsilon)

    def update_step(self, gradient, variable, learning_rate):
        """One Adam step on ``variable`` (in place)."""
        device = variable.device
        xp = device.xp
        alpha = self._alpha(learning_rate)
        # Large variables are updated in slices shared among the CPU's op threads.
        device.elementwise_blocks(
            lambda *pieces: adam_math(xp, alpha, self.beta_1, self.beta_2, self.epsilon, *pieces),
            self._group(gradient, variable))

    def get_config(self):
        config = super().get_config()
        config.update({**moment_config(self), "amsgrad": self.amsgrad})
        return config
