"""Nadam: Adam with Nesterov momentum (Dozat, 2015)."""
from minikeras.optimizers._checks import update_moments
from minikeras.optimizers.moment_optimizer import _MomentOptimizer

_MOMENTUM_DECAY = 0.96  # the schedule constant of Dozat's momentum cache


class Nadam(_MomentOptimizer):
    """Nadam, Keras 3 update rule with the momentum cache ``u``::

        t = iterations + 1
        u_t = beta_1 * (1 - 0.5 * 0.96**t);  u_next = beta_1 * (1 - 0.5 * 0.96**(t + 1))
        u_product *= u_t                     # once per step, shared by all variables
        m += (g - m) * (1 - beta_1);  v += (g**2 - v) * (1 - beta_2)
        m_hat = u_next * m / (1 - u_product * u_next) + (1 - u_t) * g / (1 - u_product)
        v_hat = v / (1 - beta_2**t)
        w -= lr * m_hat / (sqrt(v_hat) + epsilon)

    ``u_product`` is saved with the state (after the slots), in the dtype of
    the first variable, as Keras keeps it.

    Args:
        learning_rate: a float, a LearningRateSchedule or a callable.
        beta_1: decay rate of the first moment, in [0, 1].
        beta_2: decay rate of the second moment, in [0, 1].
        epsilon: small constant for numerical stability (>= 0).
        **kwargs: the base Optimizer arguments.

    Example:
        >>> optimizer = Nadam(learning_rate=0.002)
    """

    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7, name="nadam", **kwargs):
        super().__init__(learning_rate, beta_1, beta_2, epsilon, name, **kwargs)

    def build(self, variables):
        """Create the momentum and velocity slots and the momentum product."""
        if self.built:
            return
        variables = list(variables)
        super().build(variables)
        self._momentums, self._velocities = self.add_optimizer_variables(variables, ["momentum", "velocity"])
        dtype = variables[0].dtype if variables else "float32"
        self._u_product = self.add_scalar_state("u_product", 1.0, dtype)

    def _update_variables(self, grads, variables, learning_rate):
        step = self.iterations + 1
        u_t = self.beta_1 * (1.0 - 0.5 * _MOMENTUM_DECAY**step)
        u_next = self.beta_1 * (1.0 - 0.5 * _MOMENTUM_DECAY ** (step + 1))
        self._u_product[...] = float(self._u_product) * u_t
        u_product = float(self._u_product)
        # Step-wide coefficients, computed once for all variables.
        self._coefficients = (
            u_next / (1.0 - u_product * u_next),
            (1.0 - u_t) / (1.0 - u_product),
            1.0 / (1.0 - self.beta_2**step),
        )
        super()._update_variables(grads, variables, learning_rate)

    def update_step(self, gradient, variable, learning_rate):
        """One Nadam step on ``variable`` (in place); call through ``apply``,
        which updates the momentum product first."""
        momentum_weight, gradient_weight, velocity_correction = self._coefficients
        index = self.slot_index(variable)
        momentum, velocity = self._momentums[index], self._velocities[index]
        xp = variable.device.xp
        work, update = self.scratch(variable, 2)

        update_moments(xp, gradient, momentum, velocity, work, self.beta_1, self.beta_2)
        xp.multiply(momentum, momentum_weight, out=update)
        xp.multiply(gradient, gradient_weight, out=work)
        update += work
        update *= learning_rate
        xp.multiply(velocity, velocity_correction, out=work)
        xp.sqrt(work, out=work)
        work += self.epsilon
        update /= work
        variable.data -= update
