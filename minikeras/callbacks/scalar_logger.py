"""ScalarLogger: TensorBoard-style scalar logs as JSON lines.

The loss and metric curves are written as JSON lines under
``log_dir/train/`` and ``log_dir/validation/``, the layout TensorBoard uses,
so they can be plotted with any tool and need no package. The
``TensorBoard`` callback (``tensorboard.py``) writes real event files when
the tensorboard package is installed, and these JSON lines when it is not.
"""
import json
import os
import time

from minikeras.callbacks.callback import Callback

_FILE = "scalars.jsonl"


class ScalarLogger(Callback):
    """Append one JSON object per epoch (or batch) with the scalar logs.

    ``log_dir/train/scalars.jsonl`` gets ``{"step", "wall_time", "loss",
    ...}`` with the training logs (``epoch_`` prefixed, as TensorBoard
    names them, e.g. ``epoch_loss``); ``log_dir/validation/scalars.jsonl``
    the ``val_`` logs without their prefix. Lines are flushed as written.

    Args:
        log_dir: the folder to write into (created if missing).
        update_freq: ``"epoch"``, or a number of batches between
            ``batch_``-prefixed training rows.
    """

    def __init__(self, log_dir="logs", update_freq="epoch"):
        super().__init__()
        if update_freq != "epoch" and not (isinstance(update_freq, int) and update_freq > 0):
            raise ValueError(f"update_freq must be 'epoch' or a positive int, received {update_freq!r}.")
        self.log_dir = os.fspath(log_dir)
        self.update_freq = update_freq
        self._global_batch = 0

    def _write(self, split, step, values):
        folder = os.path.join(self.log_dir, split)
        os.makedirs(folder, exist_ok=True)
        row = {"step": int(step), "wall_time": time.time()}
        row.update({key: float(value) for key, value in values.items() if isinstance(value, (int, float))})
        with open(os.path.join(folder, _FILE), "a", encoding="utf-8") as handle:
            handle.write(json.dumps(row) + "\n")

    def on_train_batch_end(self, batch, logs=None):
        self._global_batch += 1
        if self.update_freq != "epoch" and self._global_batch % self.update_freq == 0:
            self._write("train", self._global_batch, {f"batch_{k}": v for k, v in (logs or {}).items()})

    def on_epoch_end(self, epoch, logs=None):
        logs = logs or {}
        train = {f"epoch_{k}": v for k, v in logs.items() if not k.startswith("val_")}
        validation = {f"epoch_{k[4:]}": v for k, v in logs.items() if k.startswith("val_")}
        self._write("train", epoch, train)
        if validation:
            self._write("validation", epoch, validation)

