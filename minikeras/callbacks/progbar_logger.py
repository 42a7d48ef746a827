"""ProgbarLogger: a tqdm progress bar per epoch (verbose=1) or one line per
epoch (verbose=2)."""
import sys
import time

from minikeras.callbacks.callback import Callback


def format_logs(logs):
    return " - ".join(f"{key}: {value:.4f}" for key, value in logs.items() if isinstance(value, (int, float)))


class ProgbarLogger(Callback):
    """Shows progress of fit/evaluate/predict.

    Args:
        verbose: 1 for a tqdm bar per epoch with running loss and metrics,
            2 for one line per epoch.
    """

    def __init__(self, verbose=1):
        super().__init__()
        self.verbose = verbose
        self._bar = None
        self._start = None

    def set_params(self, params):
        super().set_params(params)
        self.verbose = params.get("verbose", self.verbose)

    def _open(self, total, description):
        from tqdm.auto import tqdm

        self._bar = tqdm(total=total, desc=description, unit="step", file=sys.stderr, leave=True,
                         dynamic_ncols=True, mininterval=0.25)
        self._last_postfix = -float("inf")

    def on_epoch_begin(self, epoch, logs=None):
        self._start = time.perf_counter()
        epochs = self.params.get("epochs")
        if self.verbose == 1:
            self._open(self.params.get("steps"), f"Epoch {epoch + 1}/{epochs}")
        elif self.verbose == 2:
            print(f"Epoch {epoch + 1}/{epochs}", file=sys.stderr)

    def on_train_batch_end(self, batch, logs=None):
        if self._bar is not None:
            # Logs are read (a host sync on a GPU) only as often as the bar
            # redraws, not at every step.
            now = time.perf_counter()
            if logs is not None and now - self._last_postfix >= self._bar.mininterval:
                self._last_postfix = now
                self._bar.set_postfix_str(format_logs(logs), refresh=False)
            self._bar.update(1)

    def on_epoch_end(self, epoch, logs=None):
        elapsed = time.perf_counter() - (self._start or time.perf_counter())
        if self._bar is not None:
            if logs:
                self._bar.set_postfix_str(format_logs(logs), refresh=False)
            self._bar.close()
            self._bar = None
        elif self.verbose == 2:
            print(f"{self.params.get('steps')} steps - {elapsed:.1f}s - {format_logs(logs or {})}", file=sys.stderr)

    def on_test_begin(self, logs=None):
        if self.verbose == 1 and self.params.get("mode") == "evaluate":
            self._open(self.params.get("steps"), "Evaluate")

    def on_test_batch_end(self, batch, logs=None):
        self.on_train_batch_end(batch, logs)

    def on_test_end(self, logs=None):
        if self._bar is not None:
            if logs:
                self._bar.set_postfix_str(format_logs(logs), refresh=False)
            self._bar.close()
            self._bar = None

    def on_predict_begin(self, logs=None):
        if self.verbose == 1:
            self._open(self.params.get("steps"), "Predict")

    def on_predict_batch_end(self, batch, logs=None):
        if self._bar is not None:
            self._bar.update(1)

    def on_predict_end(self, logs=None):
        self.on_test_end()
