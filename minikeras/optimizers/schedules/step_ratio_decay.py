"""The base ExponentialDecay and InverseTimeDecay share: both take
``(initial_learning_rate, decay_steps, decay_rate, staircase, name)`` and
decay by a function of ``step / decay_steps`` (floored with
``staircase=True``); a subclass gives only that function."""
import math

from minikeras.optimizers.schedules.learning_rate_schedule import (
    LearningRateSchedule, check_number, check_positive, step_value,
)


class _StepRatioDecay(LearningRateSchedule):
    """Subclasses set ``_schedule_name`` (the name messages give) and
    implement ``_decayed(progress)``, the rate at ``step / decay_steps``."""

    _schedule_name = None

    def __init__(self, initial_learning_rate, decay_steps, decay_rate, staircase, name):
        check_number(self._schedule_name, "initial_learning_rate", initial_learning_rate)
        check_positive(self._schedule_name, "decay_steps", decay_steps)
        check_number(self._schedule_name, "decay_rate", decay_rate)
        self.initial_learning_rate = initial_learning_rate
        self.decay_steps = decay_steps
        self.decay_rate = decay_rate
        self.staircase = staircase
        self.name = name

    def __call__(self, step):
        progress = step_value(step, self._schedule_name) / self.decay_steps
        if self.staircase:
            progress = math.floor(progress)
        return self._decayed(progress)

    def _decayed(self, progress):
        raise NotImplementedError

    def get_config(self):
        return {
            "initial_learning_rate": self.initial_learning_rate,
            "decay_steps": self.decay_steps,
            "decay_rate": self.decay_rate,
            "staircase": self.staircase,
            "name": self.name,
        }
