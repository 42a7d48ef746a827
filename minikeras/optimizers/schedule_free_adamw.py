"""Schedule-free AdamW (Defazio et al., 2024): no learning-rate schedule needed."""
from minikeras.optimizers._checks import check_float_in_range, moment_config, set_moment_arguments
from minikeras.optimizers.optimizer import Optimizer


class ScheduleFreeAdamW(Optimizer):
    """Schedule-free AdamW, Keras 3 update rule. The ``momentum`` slot holds
    the base iterate ``z`` (started at the weights); the weights hold the
    interpolation ``y`` at which gradients are taken; the averaged iterate
    ``x`` is recovered from them each step::

        t = iterations + 1;  lr *= min(t / warmup_steps, 1)   (with warmup)
        v += (g^2 - v) (1 - beta_2)
        z_new = z - lr g / (sqrt(v / (1 - beta_2^t)) + epsilon)
        x = (y - (1 - beta_1) z_new) / beta_1
        x_new = (1 - 1/t) x + z_new / t
        y = (1 - beta_1) z_new + beta_1 x_new

    ``x`` is recovered with the *updated* ``z``, as Keras 3.15 computes it
    on its TensorFlow and PyTorch backends (its ``momentum.value`` there
    aliases the slot the step has just moved); the paper, and Keras on JAX,
    use the ``z`` from before the step. Values match Keras's recorded
    TensorFlow trajectories step for step.

    Args:
        learning_rate: a float, a LearningRateSchedule or a callable (default 0.0025).
        beta_1: the interpolation between ``z`` and ``x``, in [0, 1].
        beta_2: the decay rate of the second moment, in [0, 1].
        epsilon: small constant for numerical stability (default 1e-8).
        warmup_steps: linear warm-up of the learning rate (default 0: none).
        **kwargs: the base Optimizer arguments.
    """

    def __init__(self, learning_rate=0.0025, beta_1=0.9, beta_2=0.999, epsilon=1e-8, warmup_steps=0,
                 name="schedule_free_adam_w", **kwargs):
        super().__init__(learning_rate=learning_rate, name=name, **kwargs)
        set_moment_arguments(self, beta_1, beta_2, epsilon)
        check_float_in_range("ScheduleFreeAdamW", "warmup_steps", warmup_steps, low=0)
        self.warmup_steps = warmup_steps

    def build(self, variables):
        """Create the momentum (``z``, started at the weights) and velocity slots."""
        if self.built:
            return
        super().build(variables)
        self._momentums, self._velocities = self.add_optimizer_variables(variables, ["momentum", "velocity"])
        for momentum, variable in zip(self._momentums, variables):
            with variable.device.activate():
                momentum[...] = variable.data

    def update_step(self, gradient, variable, learning_rate):
        """One schedule-free step on ``variable`` (in place)."""
        step = self.iterations + 1
        if self.warmup_steps > 0:
            learning_rate = learning_rate * min(step / self.warmup_steps, 1.0)
        index = self.slot_index(variable)
        momentum, velocity = self._momentums[index], self._velocities[index]
        xp = variable.device.xp
        work, averaged = self.scratch(variable, 2)
        xp.multiply(gradient, gradient, out=work)
        work -= velocity
        work *= 1.0 - self.beta_2
        velocity += work
        xp.divide(velocity, 1.0 - self.beta_2**step, out=work)
        xp.sqrt(work, out=work)
        work += self.epsilon
        xp.divide(gradient, work, out=work)
        work *= learning_rate
        momentum -= work
        # x from y and the updated z (see the class docstring).
        xp.multiply(momentum, 1.0 - self.beta_1, out=averaged)
        xp.subtract(variable.data, averaged, out=averaged)
        averaged /= self.beta_1
        weight = 1.0 / step
        averaged *= 1.0 - weight
        xp.multiply(momentum, weight, out=work)
        averaged += work
        xp.multiply(momentum, 1.0 - self.beta_1, out=variable.data)
        averaged *= self.beta_1
        variable.data += averaged

    def get_config(self):
        config = super().get_config()
        config.update({**moment_config(self), "warmup_steps": self.warmup_steps})
        return config
