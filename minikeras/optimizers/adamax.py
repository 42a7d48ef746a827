"""Adamax: Adam with the infinity norm (Kingma & Ba, 2014, section 7.1)."""
from minikeras.optimizers.moment_optimizer import _MomentOptimizer


class Adamax(_MomentOptimizer):
    """Adamax, Keras 3 update rule::

        t = iterations + 1
        m += (g - m) * (1 - beta_1)
        u = max(beta_2 * u, |g|)
        w -= lr * m / ((1 - beta_1**t) * (u + epsilon))

    Args:
        learning_rate: a float, a LearningRateSchedule or a callable.
        beta_1: decay rate of the first moment, in [0, 1].
        beta_2: decay rate of the infinity norm, in [0, 1].
        epsilon: small constant for numerical stability (>= 0).
        **kwargs: the base Optimizer arguments.

    Example:
        >>> optimizer = Adamax(learning_rate=0.002)
    """

    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7, name="adamax", **kwargs):
        super().__init__(learning_rate, beta_1, beta_2, epsilon, name, **kwargs)

    def build(self, variables):
        """Create the momentum (m) and norm (u) slots."""
        if self.built:
            return
        super().build(variables)
        self._m, self._u = self.add_optimizer_variables(variables, ["momentum", "norm"])

    def update_step(self, gradient, variable, learning_rate):
        """One Adamax step on ``variable`` (in place)."""
        bias_correction = 1.0 - self.beta_1 ** (self.iterations + 1)
        index = self.slot_index(variable)
        momentum, norm = self._m[index], self._u[index]
        xp = variable.device.xp
        work, update = self.scratch(variable, 2)

        xp.subtract(gradient, momentum, out=work)
        work *= 1.0 - self.beta_1
        momentum += work
        norm *= self.beta_2
        xp.abs(gradient, out=work)
        xp.maximum(norm, work, out=norm)
        xp.multiply(momentum, learning_rate, out=update)
        xp.add(norm, self.epsilon, out=work)
        work *= bias_correction
        update /= work
        variable.data -= update
