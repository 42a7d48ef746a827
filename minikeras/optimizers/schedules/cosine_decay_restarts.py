"""CosineDecayRestarts: cosine decay that restarts, each period longer (SGDR)."""
import math

from minikeras.optimizers.schedules.learning_rate_schedule import (
    LearningRateSchedule, check_number, check_positive, step_value,
)


class CosineDecayRestarts(LearningRateSchedule):
    """Cosine decay with warm restarts (Loshchilov & Hutter, SGDR).

    The multiplier decays from 1 to ``alpha`` over ``first_decay_steps``;
    then the rate restarts, each new period ``t_mul`` times longer and
    starting ``m_mul`` times lower than the one before.

    Args:
        initial_learning_rate: the learning rate at step 0.
        first_decay_steps: positive length of the first period, in steps.
        t_mul: growth factor of the period length.
        m_mul: factor on the starting rate of each new period.
        alpha: the rate at the end of a period, as a fraction of its start.
        name: a label, kept in the config.

    Example:
        >>> schedule = CosineDecayRestarts(1.0, first_decay_steps=10, t_mul=1.0)
        >>> schedule(0), round(schedule(5), 6), schedule(10)
        (1.0, 0.5, 1.0)
    """

    def __init__(self, initial_learning_rate, first_decay_steps, t_mul=2.0, m_mul=1.0, alpha=0.0, name="SGDRDecay"):
        check_number("CosineDecayRestarts", "initial_learning_rate", initial_learning_rate)
        check_positive("CosineDecayRestarts", "first_decay_steps", first_decay_steps)
        check_positive("CosineDecayRestarts", "t_mul", t_mul)
        check_number("CosineDecayRestarts", "m_mul", m_mul)
        check_number("CosineDecayRestarts", "alpha", alpha)
        self.initial_learning_rate = initial_learning_rate
        self.first_decay_steps = first_decay_steps
        self._t_mul = t_mul
        self._m_mul = m_mul
        self.alpha = alpha
        self.name = name

    def __call__(self, step):
        completed = step_value(step, "CosineDecayRestarts") / self.first_decay_steps
        t_mul = float(self._t_mul)
        if t_mul == 1.0:
            restart = math.floor(completed)
            completed -= restart
        else:
            # Periods grow geometrically: period i starts at (1 - t_mul**i) / (1 - t_mul).
            restart = math.floor(math.log(1.0 - completed * (1.0 - t_mul)) / math.log(t_mul))
            period_start = (1.0 - t_mul**restart) / (1.0 - t_mul)
            completed = (completed - period_start) / t_mul**restart
        cosine = 0.5 * float(self._m_mul) ** restart * (1.0 + math.cos(math.pi * completed))
        return float(self.initial_learning_rate) * ((1.0 - self.alpha) * cosine + self.alpha)

    def get_config(self):
        return {
            "initial_learning_rate": self.initial_learning_rate,
            "first_decay_steps": self.first_decay_steps,
            "t_mul": self._t_mul,
            "m_mul": self._m_mul,
            "alpha": self.alpha,
            "name": self.name,
        }
