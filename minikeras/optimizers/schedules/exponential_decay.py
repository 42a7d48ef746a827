"""ExponentialDecay: ``lr * decay_rate ** (step / decay_steps)``."""
from minikeras.optimizers.schedules.step_ratio_decay import _StepRatioDecay


class ExponentialDecay(_StepRatioDecay):
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

    _schedule_name = "ExponentialDecay"

    def __init__(self, initial_learning_rate, decay_steps, decay_rate, staircase=False, name="ExponentialDecay"):
        super().__init__(initial_learning_rate, decay_steps, decay_rate, staircase, name)

    def _decayed(self, progress):
        return float(self.initial_learning_rate) * float(self.decay_rate) ** progress
