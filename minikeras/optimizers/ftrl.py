"""FTRL-proximal: follow the regularized leader (McMahan et al., 2013)."""
from minikeras.optimizers.optimizer import Optimizer


def _non_negative(name, value):
    if value < 0.0:
        raise ValueError(f"`{name}` needs to be positive or zero. Received: {name}={value}.")


class Ftrl(Optimizer):
    """FTRL-proximal, Keras 3 update rule (the optimizer of sparse, wide
    linear models: L1 drives weights to exactly zero)::

        g_s = g + 2 * l2_shrinkage * w
        n_new = n + g^2
        z += g_s - (n_new^-p - n^-p) / lr * w        (p = learning_rate_power)
        w = (clip(z, -l1, l1) - z) / (n_new^-p / lr + 2 * (l2 + beta / (2 lr)))
        n = n_new

    Args:
        learning_rate: a float, a LearningRateSchedule or a callable.
        learning_rate_power: <= 0 (default -0.5).
        initial_accumulator_value: the starting ``n`` (>= 0, default 0.1).
        l1_regularization_strength: >= 0.
        l2_regularization_strength: >= 0.
        l2_shrinkage_regularization_strength: >= 0; a magnitude penalty on
            the gradient rather than on the weights' solution.
        beta: added to the L2 term as ``beta / (2 lr)`` (default 0).
        **kwargs: the base Optimizer arguments.
    """

    def __init__(self, learning_rate=0.001, learning_rate_power=-0.5, initial_accumulator_value=0.1,
                 l1_regularization_strength=0.0, l2_regularization_strength=0.0,
                 l2_shrinkage_regularization_strength=0.0, beta=0.0, name="ftrl", **kwargs):
        super().__init__(learning_rate=learning_rate, name=name, **kwargs)
        _non_negative("initial_accumulator_value", initial_accumulator_value)
        if learning_rate_power > 0.0:
            raise ValueError(f"`learning_rate_power` needs to be negative or zero. Received: "
                             f"learning_rate_power={learning_rate_power}.")
        _non_negative("l1_regularization_strength", l1_regularization_strength)
        _non_negative("l2_regularization_strength", l2_regularization_strength)
        _non_negative("l2_shrinkage_regularization_strength", l2_shrinkage_regularization_strength)
        self.learning_rate_power = learning_rate_power
        self.initial_accumulator_value = initial_accumulator_value
        self.l1_regularization_strength = l1_regularization_strength
        self.l2_regularization_strength = l2_regularization_strength
        self.l2_shrinkage_regularization_strength = l2_shrinkage_regularization_strength
        self.beta = beta

    def build(self, variables):
        """Create the accumulator (``n``) and linear (``z``) slots."""
        if self.built:
            return
        super().build(variables)
        self._accumulators, self._linears = self.add_optimizer_variables(
            variables, ["accumulator", "linear"], initializer=[self.initial_accumulator_value, 0.0])

    def update_step(self, gradient, variable, learning_rate):
        """One FTRL step on ``variable`` (in place)."""
        index = self.slot_index(variable)
        accumulator, linear = self._accumulators[index], self._linears[index]
        xp = variable.device.xp
        power = -self.learning_rate_power
        l2 = self.l2_regularization_strength + self.beta / (2.0 * learning_rate)
        new_accumulator, work = self.scratch(variable, 2)
        xp.multiply(gradient, gradient, out=new_accumulator)
        new_accumulator += accumulator
        # linear += g + 2 * shrinkage * w - (new^p - old^p) / lr * w
        xp.power(new_accumulator, power, out=work)
        work -= xp.power(accumulator, power)
        work /= learning_rate
        work *= variable.data
        linear += gradient
        linear += (2 * self.l2_shrinkage_regularization_strength) * variable.data
        linear -= work
        xp.power(new_accumulator, power, out=work)
        work /= learning_rate
        work += 2 * l2
        l1 = self.l1_regularization_strength
        clipped = xp.clip(linear, -l1, l1)
        clipped -= linear
        xp.divide(clipped, work, out=variable.data)
        accumulator[...] = new_accumulator

    def get_config(self):
        config = super().get_config()
        config.update({
            "learning_rate_power": self.learning_rate_power,
            "initial_accumulator_value": self.initial_accumulator_value,
            "l1_regularization_strength": self.l1_regularization_strength,
            "l2_regularization_strength": self.l2_regularization_strength,
            "l2_shrinkage_regularization_strength": self.l2_shrinkage_regularization_strength,
            "beta": self.beta,
        })
        return config
