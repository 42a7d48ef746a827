"""InverseTimeDecay: ``lr / (1 + decay_rate * step / decay_steps)``."""
import math

from minikeras.optimizers.schedules.learning_rate_schedule import (
    LearningRateSchedule, check_number, check_positive, step_value,
)


class InverseTimeDecay(LearningRateSchedule):
    """Decay the learning rate as one over the step.

    ``initial_learning_rate / (1 + decay_rate * step / decay_steps)``, with
    ``step / decay_steps`` floored when ``staircase=True``.

    Args:
        initial_learning_rate: the learning rate at step 0.
        decay_steps: positive number of steps per unit of decay.
        decay_rate: how fast the rate falls.
        staircase: decay at discrete intervals instead of continuously.
        name: a label, kept in the config.

    Example:
        >>> InverseTimeDecay(0.1, decay_steps=1.0, decay_rate=0.5)(2)
        0.05
    """

    def __init__(self, initial_learning_rate, decay_steps, decay_rate, staircase=False, name="InverseTimeDecay"):
        check_number("InverseTimeDecay", "initial_learning_rate", initial_learning_rate)
        check_positive("InverseTimeDecay", "decay_steps", decay_steps)
        check_number("InverseTimeDecay", "decay_rate", decay_rate)
        self.initial_learning_rate = initial_learning_rate
        self.decay_steps = decay_steps
        self.decay_rate = decay_rate
        self.staircase = staircase
        self.name = name

    def __call__(self, step):
        progress = step_value(step, "InverseTimeDecay") / self.decay_steps
        if self.staircase:
            progress = math.floor(progress)
        return float(self.initial_learning_rate) / (1.0 + float(self.decay_rate) * progress)

    def get_config(self):
        return {
            "initial_learning_rate": self.initial_learning_rate,
            "decay_steps": self.decay_steps,
            "decay_rate": self.decay_rate,
            "staircase": self.staircase,
            "name": self.name,
        }
