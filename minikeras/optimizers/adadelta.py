"""Adadelta: step sizes from running averages of gradients and updates (Zeiler, 2012)."""
from minikeras.optimizers._checks import check_float_in_range
from minikeras.optimizers.optimizer import Optimizer


class Adadelta(Optimizer):
    """Adadelta, Keras 3 update rule (``rms(x) = sqrt(x + epsilon)``)::

        accumulated_grad = rho * accumulated_grad + (1 - rho) * g**2
        delta = -rms(accumulated_delta) * g / rms(accumulated_grad)
        accumulated_delta = rho * accumulated_delta + (1 - rho) * delta**2
        w += lr * delta

    Args:
        learning_rate: a float, a LearningRateSchedule or a callable; 1.0
            matches the original paper.
        rho: decay rate, in [0, 1].
        epsilon: small constant for numerical stability (>= 0).
        **kwargs: the base Optimizer arguments.

    Example:
        >>> optimizer = Adadelta(learning_rate=1.0)
    """

    def __init__(self, learning_rate=0.001, rho=0.95, epsilon=1e-7, name="adadelta", **kwargs):
        super().__init__(learning_rate=learning_rate, name=name, **kwargs)
        check_float_in_range("Adadelta", "rho", rho, low=0.0, high=1.0)
        check_float_in_range("Adadelta", "epsilon", epsilon, low=0.0)
        self.rho = rho
        self.epsilon = epsilon

    def build(self, variables):
        """Create the accumulated_grad and accumulated_delta_var slots."""
        if self.built:
            return
        super().build(variables)
        self._accumulated_grads, self._accumulated_delta_vars = self.add_optimizer_variables(
            variables, ["accumulated_grad", "accumulated_delta_var"]
        )

    def update_step(self, gradient, variable, learning_rate):
        """One Adadelta step on ``variable`` (in place)."""
        index = self.slot_index(variable)
        accumulated_grad = self._accumulated_grads[index]
        accumulated_delta = self._accumulated_delta_vars[index]
        xp = variable.device.xp
        delta, work = self.scratch(variable, 2)
        rho = self.rho

        accumulated_grad *= rho
        xp.multiply(gradient, gradient, out=work)
        work *= 1.0 - rho
        accumulated_grad += work
        xp.add(accumulated_delta, self.epsilon, out=delta)
        xp.sqrt(delta, out=delta)
        delta *= gradient
        xp.add(accumulated_grad, self.epsilon, out=work)
        xp.sqrt(work, out=work)
        delta /= work
        xp.negative(delta, out=delta)
        accumulated_delta *= rho
        xp.multiply(delta, delta, out=work)
        work *= 1.0 - rho
        accumulated_delta += work
        xp.multiply(delta, learning_rate, out=delta)
        variable.data += delta

    def get_config(self):
        config = super().get_config()
        config.update({"rho": self.rho, "epsilon": self.epsilon})
        return config
