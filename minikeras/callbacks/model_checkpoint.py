"""ModelCheckpoint: save the model (or its weights) during training."""
import math
import os
import sys
import warnings

from minikeras.callbacks.callback import Callback
from minikeras.callbacks.early_stopping import infer_mode


class ModelCheckpoint(Callback):
    """Save the model or its weights every epoch or every N batches (Keras semantics).

    ``filepath`` may hold ``str.format`` fields filled from ``epoch``
    (1-based, as Keras prints it), ``batch`` (1-based, with an integer
    ``save_freq``) and the logs: ``"ckpt/weights.{epoch:02d}-{val_loss:.2f}.h5"``.
    Files are written in HDF5 (``model.save`` or ``model.save_weights``),
    atomically; missing parent folders are created.

    Args:
        filepath: where to save (a path or a format string, see above).
        monitor: the log key compared when ``save_best_only``.
        verbose: 1 prints a line for every save (or skipped save).
        save_best_only: save only when ``monitor`` improves on the best so
            far (the file is overwritten unless its name holds fields).
        save_weights_only: ``model.save_weights`` instead of ``model.save``.
        mode: "min", "max" or "auto" (max for names with "acc"/"auc").
        save_freq: "epoch", or an int: save after every that many batches.
        initial_value_threshold: the best value to beat at the start (only
            with ``save_best_only``).

    Example:
        >>> checkpoint = ModelCheckpoint("best.h5", monitor="val_accuracy", save_best_only=True)
        >>> model.fit(x, y, validation_split=0.1, epochs=10, callbacks=[checkpoint])  # doctest: +SKIP
    """

    def __init__(self, filepath, monitor="val_loss", verbose=0, save_best_only=False, save_weights_only=False,
                 mode="auto", save_freq="epoch", initial_value_threshold=None):
        super().__init__()
        filepath = os.fspath(filepath)
        if save_freq != "epoch" and (isinstance(save_freq, bool) or not isinstance(save_freq, int)
                                     or save_freq <= 0):
            raise ValueError(
                f"ModelCheckpoint: unrecognized save_freq: {save_freq!r}. Expected save_freq to be 'epoch' "
                "or a positive integer."
            )
        if not save_weights_only and not filepath.endswith((".keras", ".h5", ".hdf5")):
            # model.save refuses other names (as Keras 3): say so now, not after the first epoch.
            raise ValueError("ModelCheckpoint: the filepath provided must end in `.keras` (Keras model format) or "
                             "`.h5`/`.hdf5` (legacy HDF5), or pass save_weights_only=True with a name ending in "
                             f"`.weights.h5`. Received: filepath={filepath}")
        self.filepath = filepath
        self.monitor = monitor
        self.verbose = verbose
        self.save_best_only = save_best_only
        self.save_weights_only = save_weights_only
        self.mode = infer_mode(mode, monitor, "ModelCheckpoint")
        self.save_freq = save_freq
        self.initial_value_threshold = initial_value_threshold
        self.best = self._initial_best()
        self._batches_seen_since_last_saving = 0
        self._current_epoch = 0
        self.last_saved_path = None

    def _initial_best(self):
        if self.initial_value_threshold is not None:
            return float(self.initial_value_threshold)
        return math.inf if self.mode == "min" else -math.inf

    def _improved(self, current):
        return current < self.best if self.mode == "min" else current > self.best

    # ------------------------------------------------------------------ hooks
    def on_train_begin(self, logs=None):
        self._batches_seen_since_last_saving = 0

    def on_epoch_begin(self, epoch, logs=None):
        self._current_epoch = epoch

    def on_train_batch_end(self, batch, logs=None):
        if self.save_freq == "epoch":
            return
        self._batches_seen_since_last_saving += 1
        if self._batches_seen_since_last_saving >= self.save_freq:
            self._batches_seen_since_last_saving = 0
            self._save_model(self._current_epoch, batch, logs)

    def on_epoch_end(self, epoch, logs=None):
        if self.save_freq == "epoch":
            self._save_model(epoch, None, logs)

    # ----------------------------------------------------------------- saving
    def _save_model(self, epoch, batch, logs):
        logs = dict(logs or {})
        filepath = self._get_file_path(epoch, batch, logs)
        if self.save_best_only:
            current = logs.get(self.monitor)
            if current is None:
                warnings.warn(
                    f"Can save best model only with {self.monitor} available, skipping.", stacklevel=3
                )
                return
            current = float(current)
            if not self._improved(current):
                if self.verbose > 0:
                    print(f"\nEpoch {epoch + 1}: {self.monitor} did not improve from {self.best:.5f}",
                          file=sys.stdout)
                return
            if self.verbose > 0:
                print(f"\nEpoch {epoch + 1}: {self.monitor} improved from {self.best:.5f} to {current:.5f}, "
                      f"saving model to {filepath}", file=sys.stdout)
            self.best = current
        elif self.verbose > 0:
            print(f"\nEpoch {epoch + 1}: saving model to {filepath}", file=sys.stdout)
        directory = os.path.dirname(filepath)
        if directory:
            os.makedirs(directory, exist_ok=True)
        if self.save_weights_only:
            self.model.save_weights(filepath, overwrite=True)
        else:
            self.model.save(filepath, overwrite=True)
        self.last_saved_path = filepath

    def _get_file_path(self, epoch, batch, logs):
        """``filepath`` formatted with the 1-based epoch (and batch) and the logs."""
        fields = dict(logs)
        if batch is not None and "batch" not in logs:
            fields["batch"] = batch + 1
        fields["epoch"] = epoch + 1
        try:
            return self.filepath.format(**fields)
        except (KeyError, IndexError, ValueError) as error:
            raise KeyError(
                f'Failed to format this callback filepath: "{self.filepath}". Reason: {error!r}. '
                f"Available fields: {sorted(fields)}."
            ) from error

    def get_config(self):
        """The constructor arguments."""
        return {
            "filepath": self.filepath, "monitor": self.monitor, "verbose": self.verbose,
            "save_best_only": self.save_best_only, "save_weights_only": self.save_weights_only,
            "mode": self.mode, "save_freq": self.save_freq,
            "initial_value_threshold": self.initial_value_threshold,
        }
