"""Adam: adaptive moment estimation (Kingma & Ba, 2014)."""
import math

from minikeras.backend import threads
from minikeras.optimizers._checks import moment_config, set_moment_arguments
from minikeras.optimizers.optimizer import Optimizer

# Variables with at least this many elements are updated in parallel slices
# (12 passes over 256K floats take about 1 ms, well above the thread hand-off).
_PARALLEL_MIN = 1 << 18


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

    def build(self, variables):
        """Create the momentum and velocity slots (and velocity_hat with amsgrad)."""
        if self.built:
            return
        super().build(variables)
        self._momentums, self._velocities = self.add_optimizer_variables(variables, ["momentum", "velocity"])
        self._velocity_hats = self.add_optimizer_variables(variables, "velocity_hat") if self.amsgrad else []

    def update_step(self, gradient, variable, learning_rate):
        """One Adam step on ``variable`` (in place)."""
        step = self.iterations + 1
        alpha = learning_rate * math.sqrt(1.0 - self.beta_2**step) / (1.0 - self.beta_1**step)
        index = self.slot_index(variable)
        momentum, velocity = self._momentums[index], self._velocities[index]
        device = variable.device
        xp = device.xp
        work, update = self.scratch(variable, 2)
        velocity_hat = self._velocity_hats[index] if self.amsgrad else None
        arrays = (gradient, momentum, velocity, velocity_hat, variable.data, work, update)
        if device.host_kernels and variable.data.size >= _PARALLEL_MIN and all(
                a is None or a.flags.c_contiguous for a in arrays):
            flat = [None if a is None else a.reshape(-1) for a in arrays]
            pieces = threads.even_slices(variable.data.size, 2 * threads.num_threads())

            def part(block, _):
                piece = pieces[block]
                self._adam_math(xp, alpha, *[None if a is None else a[piece] for a in flat])

            device.parallel_blocks(part, len(pieces))
        else:
            self._adam_math(xp, alpha, *arrays)

    def _adam_math(self, xp, alpha, gradient, momentum, velocity, velocity_hat, weights, work, update):
        """The update on matching arrays (whole variables or equal slices)."""
        xp.subtract(gradient, momentum, out=work)
        work *= 1.0 - self.beta_1
        momentum += work
        xp.multiply(gradient, gradient, out=work)
        work -= velocity
        work *= 1.0 - self.beta_2
        velocity += work
        if velocity_hat is not None:
            xp.maximum(velocity_hat, velocity, out=velocity_hat)
            velocity = velocity_hat
        xp.sqrt(velocity, out=work)
        work += self.epsilon
        xp.multiply(momentum, alpha, out=update)
        update /= work
        weights -= update

    def get_config(self):
        config = super().get_config()
        config.update({**moment_config(self), "amsgrad": self.amsgrad})
        return config
