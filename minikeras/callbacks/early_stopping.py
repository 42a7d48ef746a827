"""EarlyStopping: stop training when a monitored quantity stops improving."""
import sys
import warnings

from minikeras.callbacks.callback import Callback


def infer_mode(mode, monitor, owner):
    """``"min"`` or ``"max"`` for ``mode`` ("auto", "min", "max").

    "auto" means "max" for accuracies and AUCs (a name containing "acc" or
    "auc") and "min" for everything else (losses, errors), as Keras guesses.
    An unknown mode warns and falls back to "auto", as in Keras.
    """
    if mode not in ("auto", "min", "max"):
        warnings.warn(f"{owner} mode '{mode}' is unknown, fallback to auto mode.", stacklevel=3)
        mode = "auto"
    if mode != "auto":
        return mode
    name = str(monitor).lower()
    return "max" if "acc" in name or "auc" in name else "min"


def missing_metric_message(what, monitor, logs):
    """The Keras warning text for a monitored metric absent from ``logs``."""
    available = ",".join(logs or {})
    return f"{what} conditioned on metric `{monitor}` which is not available. Available metrics are: {available}"


class EarlyStopping(Callback):
    """Stop training when ``monitor`` has stopped improving (Keras semantics).

    After each epoch (from ``start_from_epoch`` on) the monitored value is
    compared with the best seen so far; an improvement of more than
    ``min_delta`` resets the patience counter. When ``patience`` epochs pass
    without one, ``model.stop_training`` is set and the loop ends after the
    current epoch.

    Args:
        monitor: the log key to watch, e.g. ``"val_loss"`` or ``"accuracy"``.
        min_delta: the smallest change that counts as an improvement.
        patience: epochs without improvement before stopping.
        verbose: 1 prints a line when stopping and when restoring weights.
        mode: "min", "max" or "auto" (max for names with "acc"/"auc").
        baseline: the patience counter is only reset by values better than
            this (training stops after ``patience`` epochs if it is never
            beaten).
        restore_best_weights: at the end of training (whether stopped early
            or not), set the weights of the best epoch back into the model.
        start_from_epoch: epochs to wait before monitoring starts (warm-up).

    Attributes:
        stopped_epoch: the (0-based) epoch at which training was stopped, 0 if
            it was not.
        best: the best monitored value seen; ``best_epoch``: its epoch.

    Example:
        >>> stop = EarlyStopping(monitor="val_loss", patience=3, restore_best_weights=True)
        >>> model.fit(x, y, validation_split=0.2, epochs=100, callbacks=[stop])  # doctest: +SKIP
    """

    def __init__(self, monitor="val_loss", min_delta=0, patience=0, verbose=0, mode="auto", baseline=None,
                 restore_best_weights=False, start_from_epoch=0):
        super().__init__()
        if not isinstance(patience, int) or isinstance(patience, bool) or patience < 0:
            raise ValueError(f"EarlyStopping: patience must be a non-negative int, received {patience!r}.")
        if not isinstance(start_from_epoch, int) or isinstance(start_from_epoch, bool) or start_from_epoch < 0:
            raise ValueError(
                f"EarlyStopping: start_from_epoch must be a non-negative int, received {start_from_epoch!r}."
            )
        self.monitor = monitor
        self.min_delta = abs(float(min_delta))
        self.patience = patience
        self.verbose = verbose
        self.mode = infer_mode(mode, monitor, "EarlyStopping")
        self.baseline = baseline
        self.restore_best_weights = restore_best_weights
        self.start_from_epoch = start_from_epoch
        self._reset()

    def _reset(self):
        self.wait = 0
        self.stopped_epoch = 0
        self.best = None
        self.best_epoch = 0
        self.best_weights = None

    def _is_improvement(self, value, reference):
        if reference is None:
            return True
        if self.mode == "max":
            return value - self.min_delta > reference
        return value + self.min_delta < reference

    def on_train_begin(self, logs=None):
        # Reset, so that one instance can serve several fit() calls.
        self._reset()

    def on_epoch_end(self, epoch, logs=None):
        current = self._monitor_value(logs)
        if current is None or epoch < self.start_from_epoch:
            return
        if self.restore_best_weights and self.best_weights is None:
            # Keep some weights even if no epoch ever improves on the baseline.
            self.best_weights = self.model.get_weights()
            self.best_epoch = epoch
        self.wait += 1
        if self._is_improvement(current, self.best):
            self.best = current
            self.best_epoch = epoch
            if self.restore_best_weights:
                self.best_weights = self.model.get_weights()
            if self.baseline is None or self._is_improvement(current, self.baseline):
                self.wait = 0
            return
        if self.wait >= self.patience and epoch > 0:
            self.stopped_epoch = epoch
            self.model.stop_training = True

    def on_train_end(self, logs=None):
        if self.stopped_epoch > 0 and self.verbose > 0:
            print(f"Epoch {self.stopped_epoch + 1}: early stopping", file=sys.stdout)
        if self.restore_best_weights and self.best_weights is not None:
            if self.verbose > 0:
                print(f"Restoring model weights from the end of the best epoch: {self.best_epoch + 1}.",
                      file=sys.stdout)
            self.model.set_weights(self.best_weights)

    def _monitor_value(self, logs):
        value = (logs or {}).get(self.monitor)
        if value is None:
            warnings.warn(missing_metric_message("Early stopping", self.monitor, logs), stacklevel=3)
            return None
        return float(value)

    def get_config(self):
        """The constructor arguments."""
        return {
            "monitor": self.monitor, "min_delta": self.min_delta, "patience": self.patience,
            "verbose": self.verbose, "mode": self.mode, "baseline": self.baseline,
            "restore_best_weights": self.restore_best_weights, "start_from_epoch": self.start_from_epoch,
        }
