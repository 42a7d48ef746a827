"""ReduceLROnPlateau: lower the learning rate when a metric stops improving."""
import math
import sys
import warnings

import numpy

from minikeras.callbacks.callback import Callback
from minikeras.callbacks.early_stopping import infer_mode, missing_metric_message


class ReduceLROnPlateau(Callback):
    """Multiply the learning rate by ``factor`` after ``patience`` epochs
    without improvement of ``monitor`` (Keras semantics).

    An epoch improves when the value beats the best so far by more than
    ``min_delta``. After a reduction, ``cooldown`` epochs pass before the
    patience counter runs again. The learning rate never goes below
    ``min_lr``. The current learning rate is added to the epoch logs as
    ``"learning_rate"``.

    Args:
        monitor: the log key to watch.
        factor: the multiplier, ``new_lr = lr * factor`` (must be < 1).
        patience: epochs without improvement before reducing.
        verbose: 1 prints a line at every reduction.
        mode: "min", "max" or "auto" (max for names with "acc"/"auc").
        min_delta: the smallest change that counts as an improvement.
        cooldown: epochs to wait after a reduction before counting again.
        min_lr: the lower bound of the learning rate.

    Example:
        >>> reduce_lr = ReduceLROnPlateau(monitor="val_loss", factor=0.2, patience=5, min_lr=0.001)
        >>> model.fit(x, y, validation_split=0.1, callbacks=[reduce_lr])  # doctest: +SKIP
    """

    def __init__(self, monitor="val_loss", factor=0.1, patience=10, verbose=0, mode="auto", min_delta=1e-4,
                 cooldown=0, min_lr=0.0, **kwargs):
        super().__init__()
        if "epsilon" in kwargs:  # the old Keras name of min_delta
            min_delta = kwargs.pop("epsilon")
            warnings.warn("`epsilon` argument is deprecated and will be removed, use `min_delta` instead.",
                          stacklevel=2)
        if kwargs:
            raise TypeError(f"ReduceLROnPlateau got unexpected keyword argument(s): {sorted(kwargs)}.")
        if factor >= 1.0:
            raise ValueError(f"ReduceLROnPlateau does not support a factor >= 1.0. Received factor={factor}")
        if not factor >= 0.0:  # also nan: a negative or nan factor would make the learning rate garbage
            raise ValueError(f"ReduceLROnPlateau: factor must be in [0, 1). Received factor={factor}")
        self.monitor = monitor
        self.factor = float(factor)
        self.patience = patience
        self.verbose = verbose
        self.mode = infer_mode(mode, monitor, "Learning rate reduction")
        self.min_delta = float(min_delta)
        self.cooldown = cooldown
        self.min_lr = float(min_lr)
        self._reset()

    def _reset(self):
        self.best = math.inf if self.mode == "min" else -math.inf
        self.cooldown_counter = 0
        self.wait = 0

    def _improved(self, current):
        if self.mode == "min":
            return current < self.best - self.min_delta
        return current > self.best + self.min_delta

    def in_cooldown(self):
        """Whether a reduction happened less than ``cooldown`` epochs ago."""
        return self.cooldown_counter > 0

    def on_train_begin(self, logs=None):
        self._reset()

    def on_epoch_end(self, epoch, logs=None):
        logs = logs if logs is not None else {}
        optimizer = self.model.optimizer
        logs["learning_rate"] = float(optimizer.learning_rate)
        current = logs.get(self.monitor)
        if current is None:
            warnings.warn(missing_metric_message("Learning rate reduction is", self.monitor, logs) + ".",
                          stacklevel=3)
            return
        current = float(current)
        if self.in_cooldown():
            self.cooldown_counter -= 1
            self.wait = 0
        if self._improved(current):
            self.best = current
            self.wait = 0
        elif not self.in_cooldown():
            self.wait += 1
            if self.wait >= self.patience:
                old_lr = float(optimizer.learning_rate)
                # Compared in float32, as Keras does, so that an lr already at
                # min_lr (up to float32 rounding) is left alone.
                if numpy.float32(old_lr) > numpy.float32(self.min_lr):
                    new_lr = max(old_lr * self.factor, self.min_lr)
                    optimizer.learning_rate = new_lr
                    if self.verbose > 0:
                        print(f"\nEpoch {epoch + 1}: ReduceLROnPlateau reducing learning rate to {new_lr}.",
                              file=sys.stdout)
                    self.cooldown_counter = self.cooldown
                    self.wait = 0

