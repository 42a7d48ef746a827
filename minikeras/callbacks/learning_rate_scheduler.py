"""LearningRateScheduler: set the learning rate at the start of every epoch."""
import inspect
import numbers
import sys

from minikeras.callbacks.callback import Callback


def _takes_learning_rate(schedule):
    """Whether ``schedule`` accepts ``(epoch, lr)`` rather than ``(epoch)``."""
    try:
        parameters = inspect.signature(schedule).parameters.values()
    except (TypeError, ValueError):
        return True  # builtins without a signature: try the two-argument form, as Keras does
    positional = [p for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    variadic = any(p.kind == p.VAR_POSITIONAL for p in parameters)
    return variadic or len(positional) >= 2


class LearningRateScheduler(Callback):
    """Learning rate scheduler (Keras semantics).

    At the beginning of every epoch, calls ``schedule(epoch, lr)`` (or
    ``schedule(epoch)`` for a one-argument function) with the 0-based epoch
    and the current learning rate, and sets the optimizer's learning rate to
    the result. At the end of every epoch the learning rate is added to the
    logs as ``"learning_rate"`` (so ``History`` records it).

    Args:
        schedule: a function ``(epoch, lr) -> new lr`` or ``(epoch) -> lr``.
        verbose: 1 prints the new learning rate every epoch.

    Example:
        >>> def schedule(epoch, lr):
        ...     return lr if epoch < 10 else lr * 0.9
        >>> model.fit(x, y, epochs=15, callbacks=[LearningRateScheduler(schedule)])  # doctest: +SKIP
    """

    def __init__(self, schedule, verbose=0):
        super().__init__()
        if not callable(schedule):
            raise TypeError(f"LearningRateScheduler expects a callable schedule, received {schedule!r}.")
        self.schedule = schedule
        self.verbose = verbose

    def _optimizer(self):
        optimizer = getattr(self.model, "optimizer", None)
        if optimizer is None or not hasattr(optimizer, "learning_rate"):
            raise ValueError('Optimizer must have a "learning_rate" attribute.')
        return optimizer

    def on_epoch_begin(self, epoch, logs=None):
        optimizer = self._optimizer()
        if _takes_learning_rate(self.schedule):
            learning_rate = self.schedule(epoch, float(optimizer.learning_rate))
        else:
            learning_rate = self.schedule(epoch)
        if isinstance(learning_rate, bool) or not isinstance(learning_rate, numbers.Real):
            raise ValueError(f"The output of the `schedule` function should be a float. Got: {learning_rate!r}")
        learning_rate = float(learning_rate)
        optimizer.learning_rate = learning_rate
        if self.verbose > 0:
            print(f"\nEpoch {epoch + 1}: LearningRateScheduler setting learning rate to {learning_rate}.",
                  file=sys.stdout)

    def on_epoch_end(self, epoch, logs=None):
        if logs is not None:
            logs["learning_rate"] = float(self._optimizer().learning_rate)
