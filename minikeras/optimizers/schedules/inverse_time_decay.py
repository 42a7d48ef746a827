"""InverseTimeDecay: ``lr / (1 + decay_rate * step / decay_steps)``."""
from minikeras.optimizers.schedules.step_ratio_decay import _StepRatioDecay


class InverseTimeDecay(_StepRatioDecay):
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

    _schedule_name = "InverseTimeDecay"

    def __init__(self, initial_learning_rate, decay_steps, decay_rate, staircase=False, name="InverseTimeDecay"):
        super().__init__(initial_learning_rate, decay_steps, decay_rate, staircase, name)

    def _decayed(self, progress):
        return float(self.initial_learning_rate) / (1.0 + float(self.decay_rate) * progress)
