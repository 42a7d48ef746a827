"""LAMB: layer-wise adaptive moments for large batches (You et al., 2019)."""
from minikeras.optimizers._checks import update_moments
from minikeras.optimizers.moment_optimizer import _MomentOptimizer


class Lamb(_MomentOptimizer):
    """LAMB, Keras 3 update rule: an Adam direction rescaled per variable by
    the trust ratio ``||w|| / ||update||``, so every layer moves by the
    same fraction of its norm whatever its gradients' scale::

        t = iterations + 1
        m += (g - m) * (1 - beta_1);  v += (g^2 - v) * (1 - beta_2)
        update = (m / (1 - beta_1^t)) / (sqrt(v / (1 - beta_2^t)) + epsilon)
        ratio = ||w|| / ||update||  (1 when either norm is 0)
        w -= ratio * lr * update

    The norms stay on the device: a step reads nothing back to the host.

    Args:
        learning_rate: a float, a LearningRateSchedule or a callable.
        beta_1, beta_2: decay rates of the moments, in [0, 1].
        epsilon: small constant for numerical stability (>= 0).
        **kwargs: the base Optimizer arguments.
    """

    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7, name="lamb", **kwargs):
        super().__init__(learning_rate, beta_1, beta_2, epsilon, name, **kwargs)

    def build(self, variables):
        """Create the momentum and velocity slots."""
        if self.built:
            return
        super().build(variables)
        self._momentums, self._velocities = self.add_optimizer_variables(variables, ["momentum", "velocity"])

    def update_step(self, gradient, variable, learning_rate):
        """One LAMB step on ``variable`` (in place)."""
        step = self.iterations + 1
        index = self.slot_index(variable)
        momentum, velocity = self._momentums[index], self._velocities[index]
        xp = variable.device.xp
        work, update = self.scratch(variable, 2)
        update_moments(xp, gradient, momentum, velocity, work, self.beta_1, self.beta_2)
        xp.divide(velocity, 1.0 - self.beta_2**step, out=work)
        xp.sqrt(work, out=work)
        work += self.epsilon
        xp.divide(momentum, 1.0 - self.beta_1**step, out=update)
        update /= work
        weight_norm = xp.sqrt((variable.data * variable.data).sum())
        update_norm = xp.sqrt((update * update).sum())
        safe_update_norm = xp.where(update_norm > 0, update_norm, 1.0)
        ratio = xp.where((weight_norm > 0) & (update_norm > 0), weight_norm / safe_update_norm, 1.0)
        update *= (ratio * learning_rate).astype(update.dtype)
        variable.data -= update
