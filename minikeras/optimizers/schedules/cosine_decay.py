"""CosineDecay: half a cosine from the learning rate down to ``alpha`` of it,
after an optional linear warmup."""
import math

from minikeras.optimizers.schedules.learning_rate_schedule import (
    LearningRateSchedule, check_number, check_positive, step_value,
)


class CosineDecay(LearningRateSchedule):
    """Cosine decay with an optional linear warmup (SGDR without restarts).

    Without ``warmup_target`` the rate goes from ``initial_learning_rate`` to
    ``initial_learning_rate * alpha`` over ``decay_steps``::

        step = min(step, decay_steps)
        lr = initial_learning_rate * ((1 - alpha) * 0.5 * (1 + cos(pi * step / decay_steps)) + alpha)

    With ``warmup_target`` it first rises linearly from
    ``initial_learning_rate`` to ``warmup_target`` over ``warmup_steps``, then
    decays from ``warmup_target`` as above over the next ``decay_steps``.

    Args:
        initial_learning_rate: the learning rate at step 0.
        decay_steps: positive number of steps to decay over.
        alpha: the final rate as a fraction of the rate decay starts from.
        name: a label, kept in the config.
        warmup_target: the rate reached at the end of warmup, or None for no
            warmup.
        warmup_steps: the number of warmup steps (>= 0).

    Example:
        >>> schedule = CosineDecay(0.0, decay_steps=10, warmup_target=1.0, warmup_steps=10)
        >>> schedule(5), schedule(10), round(schedule(15), 6), schedule(20)
        (0.5, 1.0, 0.5, 0.0)
    """

    def __init__(self, initial_learning_rate, decay_steps, alpha=0.0, name="CosineDecay", warmup_target=None,
                 warmup_steps=0):
        check_number("CosineDecay", "initial_learning_rate", initial_learning_rate)
        check_positive("CosineDecay", "decay_steps", decay_steps)
        check_number("CosineDecay", "alpha", alpha)
        if warmup_target is not None:
            check_number("CosineDecay", "warmup_target", warmup_target)
        check_number("CosineDecay", "warmup_steps", warmup_steps)
        if warmup_steps < 0:
            raise ValueError(f"CosineDecay: argument `warmup_steps` must be >= 0. Received: warmup_steps={warmup_steps!r}")
        self.initial_learning_rate = initial_learning_rate
        self.decay_steps = decay_steps
        self.alpha = alpha
        self.name = name
        self.warmup_target = warmup_target
        self.warmup_steps = warmup_steps

    def _decay(self, step, decay_from):
        cosine = 0.5 * (1.0 + math.cos(math.pi * step / self.decay_steps))
        return decay_from * ((1.0 - self.alpha) * cosine + self.alpha)

    def __call__(self, step):
        step = step_value(step, "CosineDecay")
        initial = float(self.initial_learning_rate)
        if self.warmup_target is None:
            return self._decay(min(step, self.decay_steps), initial)
        warmup_steps = float(self.warmup_steps)
        step = min(step, self.decay_steps + warmup_steps)
        if step < warmup_steps:
            return (float(self.warmup_target) - initial) * (step / warmup_steps) + initial
        return self._decay(step - warmup_steps, float(self.warmup_target))

    def get_config(self):
        return {
            "initial_learning_rate": self.initial_learning_rate,
            "decay_steps": self.decay_steps,
            "alpha": self.alpha,
            "name": self.name,
            "warmup_target": self.warmup_target,
            "warmup_steps": self.warmup_steps,
        }
