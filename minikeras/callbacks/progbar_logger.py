"""ProgbarLogger: Keras's progress line for fit, evaluate and predict."""
import time

from minikeras.callbacks.callback import Callback
from minikeras._support.progbar import Progbar


class ProgbarLogger(Callback):
    """Prints progress to stdout as Keras 3 does (see ``_support/progbar.py``).

    ``Epoch i/n`` before each epoch when there are several, then a bar
    (verbose=1) or one line per epoch (verbose=2). The validation pass
    inside fit is not shown separately: its results end the epoch's line.

    Args:
        verbose: overrides ``params["verbose"]`` when given.
    """

    def __init__(self, verbose=None):
        super().__init__()
        self.verbose = verbose
        self._bar = None
        self._seen = 0
        self._in_fit = False

    def set_params(self, params):
        super().set_params(params)
        if params.get("verbose") is not None:
            self.verbose = params["verbose"]

    def _open(self):
        self._seen = 0
        self._bar = Progbar(self.params.get("steps"), verbose=self.verbose or 1)

    def _step(self, batch, logs):
        self._seen = batch + 1
        bar = self._bar
        if bar is not None:  # the logs are running values already: shown as given
            # Read the logs (a host sync on a GPU) only for a line that is
            # redrawn now, not at every step.
            redraws = bar.verbose == 1 and bar.interactive and time.perf_counter() - bar._last_draw >= bar.interval
            if not redraws:
                logs = None
            if logs is not None:
                bar.stateful_metrics.update(logs)
            bar.update(self._seen, logs, finalize=False)

    def _close(self, logs):
        if self._bar is not None:
            self._bar.stateful_metrics.update(logs or {})
            # As Keras: the last line shows the target when there is one (with
            # steps_per_execution the last group is told a step past the end).
            self._bar.update(self._bar.target or self._seen, logs, finalize=True)
            self._bar = None

    def on_train_begin(self, logs=None):
        self._in_fit = True

    def on_train_end(self, logs=None):
        self._in_fit = False

    def on_epoch_begin(self, epoch, logs=None):
        if not self.verbose:
            return
        epochs = self.params.get("epochs") or 1
        if epochs > 1:
            print(f"Epoch {epoch + 1}/{epochs}", flush=True)
        self._open()

    def on_train_batch_end(self, batch, logs=None):
        self._step(batch, logs)

    def on_epoch_end(self, epoch, logs=None):
        self._close(logs)

    def on_test_begin(self, logs=None):
        if self.verbose and not self._in_fit:
            self._open()

    def on_test_batch_end(self, batch, logs=None):
        if not self._in_fit:
            self._step(batch, logs)

    def on_test_end(self, logs=None):
        if not self._in_fit:
            self._close(logs)

    def on_predict_begin(self, logs=None):
        if self.verbose:
            self._open()

    def on_predict_batch_end(self, batch, logs=None):
        self._step(batch, None)

    def on_predict_end(self, logs=None):
        self._close(None)
