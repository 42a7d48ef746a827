"""Adagrad: per-coordinate learning rates from the sum of squared gradients."""
from minikeras.optimizers._checks import check_float_in_range
from minikeras.optimizers.optimizer import Optimizer


class Adagrad(Optimizer):
    """Adagrad (Duchi et al., 2011), Keras 3 update rule::

        accumulator += g**2
        w -= lr * g / sqrt(accumulator + epsilon)

    Args:
        learning_rate: a float, a LearningRateSchedule or a callable.
        initial_accumulator_value: starting value of the accumulators (>= 0).
        epsilon: small constant for numerical stability (>= 0).
        **kwargs: the base Optimizer arguments.

    Example:
        >>> optimizer = Adagrad(learning_rate=0.1)
    """

    def __init__(self, learning_rate=0.001, initial_accumulator_value=0.1, epsilon=1e-7, name="adagrad", **kwargs):
        super().__init__(learning_rate=learning_rate, name=name, **kwargs)
        check_float_in_range("Adagrad", "initial_accumulator_value", initial_accumulator_value, low=0.0)
        check_float_in_range("Adagrad", "epsilon", epsilon, low=0.0)
        self.initial_accumulator_value = initial_accumulator_value
        self.epsilon = epsilon

    def build(self, variables):
        """Create the accumulator slots, filled with ``initial_accumulator_value``."""
        if self.built:
            return
        super().build(variables)
        self._accumulators = self.add_optimizer_variables(
            variables, "accumulator", initializer=self.initial_accumulator_value
        )

    def update_step(self, gradient, variable, learning_rate):
        """One Adagrad step on ``variable`` (in place)."""
        accumulator = self._accumulators[self.slot_index(variable)]
        xp = variable.device.xp
        work, update = self.scratch(variable, 2)
        xp.multiply(gradient, gradient, out=work)
        accumulator += work
        xp.add(accumulator, self.epsilon, out=work)
        xp.sqrt(work, out=work)
        xp.multiply(gradient, learning_rate, out=update)
        update /= work
        variable.data -= update

    def get_config(self):
        config = super().get_config()
        config.update({"initial_accumulator_value": self.initial_accumulator_value, "epsilon": self.epsilon})
        return config
