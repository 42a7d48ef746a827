"""PolynomialDecay: from the initial to the end learning rate along ``(1 - t) ** power``."""
import math

from minikeras.optimizers.schedules.learning_rate_schedule import (
    LearningRateSchedule, check_number, check_positive, step_value,
)


class PolynomialDecay(LearningRateSchedule):
    """Decay polynomially from ``initial_learning_rate`` to ``end_learning_rate``.

    ``(initial - end) * (1 - step / decay_steps) ** power + end`` with the
    step capped at ``decay_steps``. With ``cycle=True`` the step is not
    capped; instead ``decay_steps`` is stretched to the first multiple of
    itself that is >= step (1 at step 0), so the decay restarts.

    Args:
        initial_learning_rate: the learning rate at step 0.
        decay_steps: positive number of steps to reach the end rate.
        end_learning_rate: the final learning rate.
        power: the power of the polynomial (1.0 is linear).
        cycle: restart the decay past ``decay_steps``.
        name: a label, kept in the config.

    Example:
        >>> PolynomialDecay(1.0, decay_steps=10, end_learning_rate=0.0)(5)
        0.5
    """

    def __init__(
        self, initial_learning_rate, decay_steps, end_learning_rate=0.0001, power=1.0, cycle=False,
        name="PolynomialDecay",
    ):
        check_number("PolynomialDecay", "initial_learning_rate", initial_learning_rate)
        check_positive("PolynomialDecay", "decay_steps", decay_steps)
        check_number("PolynomialDecay", "end_learning_rate", end_learning_rate)
        check_number("PolynomialDecay", "power", power)
        self.initial_learning_rate = initial_learning_rate
        self.decay_steps = decay_steps
        self.end_learning_rate = end_learning_rate
        self.power = power
        self.cycle = cycle
        self.name = name

    def __call__(self, step):
        step = step_value(step, "PolynomialDecay")
        decay_steps = float(self.decay_steps)
        if self.cycle:
            multiplier = 1.0 if step == 0 else math.ceil(step / decay_steps)
            decay_steps *= multiplier
        else:
            step = min(step, decay_steps)
        fraction_left = 1.0 - step / decay_steps
        end = float(self.end_learning_rate)
        return (float(self.initial_learning_rate) - end) * fraction_left ** float(self.power) + end

    def get_config(self):
        return {
            "initial_learning_rate": self.initial_learning_rate,
            "decay_steps": self.decay_steps,
            "end_learning_rate": self.end_learning_rate,
            "power": self.power,
            "cycle": self.cycle,
            "name": self.name,
        }
