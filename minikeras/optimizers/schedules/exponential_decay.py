"""ExponentialDecay: ``lr * decay_rate ** (step / decay_steps)``."""
import math

from minikeras.optimizers.schedules.learning_rate_schedule import (
    LearningRateSchedule, check_number, check_positive, step_value,
)


class ExponentialDecay(LearningRateSchedule):
    """Decay the learning rate exponentially with the step.

    ``initial_learning_rate * decay_rate ** (step / decay_steps)``, where the
    exponent is floored when ``staircase=True`` (one drop every
    ``decay_steps`` steps).

    Args:
        initial_learning_rate: the learning rate at step 0.
        decay_steps: positive number of steps for one factor of ``decay_rate``.
        decay_rate: the factor applied every ``decay_steps`` steps.
        staircase: decay at discrete intervals instead of continuously.
        name: a label, kept in the config.

    Example:
        >>> schedule = ExponentialDecay(0.1, decay_steps=10, decay_rate=0.5)
        >>> round(schedule(20), 6)
        0.025
    """

    def __init__(self, initial_learning_rate, decay_steps, decay_rate, staircase=False, name="ExponentialDecay"):
        check_number("ExponentialDecay", "initial_learning_rate", initial_learning_rate)
        check_positive("ExponentialDecay", "decay_steps", decay_steps)
        check_number("ExponentialDecay", "decay_rate", decay_rate)
        self.initial_learning_rate = initial_learning_rate
        self.decay_steps = decay_steps
        self.decay_rate = decay_rate
        self.staircase = staircase
        self.name = name

    def __call__(self, step):
        progress = step_value(step, "ExponentialDecay") / self.decay_steps
        if self.staircase:
            progress = math.floor(progress)
        return float(self.initial_learning_rate) * float(self.decay_rate) ** progress

    def get_config(self):
        return {
            "initial_learning_rate": self.initial_learning_rate,
            "decay_steps": self.decay_steps,
            "decay_rate": self.decay_rate,
            "staircase": self.staircase,
            "name": self.name,
        }
