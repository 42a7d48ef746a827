"""Lion: evolved sign momentum (Chen et al., 2023)."""
from minikeras.optimizers._checks import check_float_in_range
from minikeras.optimizers.optimizer import Optimizer


class Lion(Optimizer):
    """Lion, Keras 3 update rule: the step is the sign of an interpolation
    of momentum and gradient, so every weight moves by exactly ``lr``::

        w -= lr * sign(beta_1 * m + (1 - beta_1) * g)
        m = beta_2 * m + (1 - beta_2) * g

    Its steps are larger than Adam's for the same rate: use a learning rate
    3-10 times smaller (and a weight decay as many times larger).

    Args:
        learning_rate: a float, a LearningRateSchedule or a callable.
        beta_1: the interpolation used for the step, in (0, 1].
        beta_2: the decay rate of the momentum, in [0, 1].
        **kwargs: the base Optimizer arguments.

    Raises:
        ValueError: ``beta_1`` outside (0, 1] (Lion would be SignSGD).
    """

    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.99, name="lion", **kwargs):
        super().__init__(learning_rate=learning_rate, name=name, **kwargs)
        if not isinstance(beta_1, bool) and isinstance(beta_1, (int, float)) and (beta_1 <= 0 or beta_1 > 1):
            raise ValueError("Argument `beta_1` must be in the [0, 1] range. Otherwise, the optimizer degenerates to "
                             f"SignSGD. Received: beta_1={beta_1}.")
        check_float_in_range("Lion", "beta_1", beta_1, low=0.0, high=1.0, low_inclusive=False)
        check_float_in_range("Lion", "beta_2", beta_2, low=0.0, high=1.0)
        self.beta_1, self.beta_2 = beta_1, beta_2

    def build(self, variables):
        """Create the momentum slots."""
        if self.built:
            return
        super().build(variables)
        self._momentums = self.add_optimizer_variables(variables, "momentum")

    def update_step(self, gradient, variable, learning_rate):
        """One Lion step on ``variable`` (in place)."""
        momentum = self._momentums[self.slot_index(variable)]
        xp = variable.device.xp
        work, update = self.scratch(variable, 2)
        xp.multiply(momentum, self.beta_1, out=work)
        xp.multiply(gradient, 1.0 - self.beta_1, out=update)
        work += update
        xp.sign(work, out=work)
        work *= learning_rate
        variable.data -= work
        momentum *= self.beta_2
        xp.multiply(gradient, 1.0 - self.beta_2, out=update)
        momentum += update

    def get_config(self):
        config = super().get_config()
        config.update({"beta_1": self.beta_1, "beta_2": self.beta_2})
        return config
