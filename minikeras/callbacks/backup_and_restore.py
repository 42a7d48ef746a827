"""BackupAndRestore: resume an interrupted fit where it stopped."""
import json
import os

import numpy

from minikeras.callbacks.callback import Callback

_WEIGHTS = "latest.weights.h5"
_OPTIMIZER = "optimizer_state.npz"
_METADATA = "training_metadata.json"


class BackupAndRestore(Callback):
    """Back up the model's weights, optimizer state and epoch at the end of
    every epoch (or every ``save_freq`` batches) into ``backup_dir``; a
    later ``fit`` with the same callback starts from that backup instead of
    from scratch, at the epoch after the last one completed. The backup is
    deleted when training ends normally (``delete_checkpoint=True``).

    Every file is written atomically (temporary file, then rename), so an
    interruption during a backup leaves the previous one intact. The
    optimizer state is plain arrays (``.npz`` read with pickling off).

    Args:
        backup_dir: a directory for the backup files.
        save_freq: ``"epoch"``, or a number of batches between backups.
        delete_checkpoint: delete the backup once fit completes.
        double_checkpoint: accepted for Keras compatibility (the atomic
            writes give the same protection).

    Example:
        >>> model.fit(x, y, epochs=10, callbacks=[BackupAndRestore("/tmp/backup")])  # doctest: +SKIP
    """

    def __init__(self, backup_dir, save_freq="epoch", double_checkpoint=False, delete_checkpoint=True):
        super().__init__()
        if not backup_dir:
            raise ValueError("BackupAndRestore needs a backup_dir, received an empty value.")
        if save_freq != "epoch" and not (isinstance(save_freq, int) and save_freq > 0):
            raise ValueError(f"save_freq must be 'epoch' or a positive int, received {save_freq!r}.")
        self.backup_dir = os.fspath(backup_dir)
        self.save_freq = save_freq
        self.delete_checkpoint = delete_checkpoint
        self._epoch = 0
        self._batches_seen = 0

    def _path(self, name):
        return os.path.join(self.backup_dir, name)

    def on_train_begin(self, logs=None):
        metadata_path = self._path(_METADATA)
        if not os.path.exists(metadata_path):
            return
        with open(metadata_path, encoding="utf-8") as handle:
            metadata = json.load(handle)
        self.model.load_weights(self._path(_WEIGHTS))
        optimizer = getattr(self.model, "optimizer", None)
        if optimizer is not None and os.path.exists(self._path(_OPTIMIZER)):
            with numpy.load(self._path(_OPTIMIZER), allow_pickle=False) as saved:
                state = [saved[f"arr_{i}"] for i in range(len(saved.files))]
            if not optimizer.built:
                optimizer.build(self.model.trainable_weights)
            optimizer.set_state(state)
        # Read by fit after on_train_begin: the next epoch to run.
        self.model._initial_epoch = int(metadata["epoch"]) + 1

    def on_epoch_begin(self, epoch, logs=None):
        self._epoch = epoch

    def on_train_batch_end(self, batch, logs=None):
        self._batches_seen += 1
        if self.save_freq != "epoch" and self._batches_seen % self.save_freq == 0:
            self._backup(self._epoch - 1)  # the epoch in progress is not complete

    def on_epoch_end(self, epoch, logs=None):
        if self.save_freq == "epoch":
            self._backup(epoch)

    def on_train_end(self, logs=None):
        if self.delete_checkpoint:  # an exception skips on_train_end: the backup then survives
            for name in (_WEIGHTS, _OPTIMIZER, _METADATA):
                if os.path.exists(self._path(name)):
                    os.remove(self._path(name))

    def _backup(self, completed_epoch):
        from minikeras.saving.atomic import atomic_write

        os.makedirs(self.backup_dir, exist_ok=True)
        self.model.save_weights(self._path(_WEIGHTS), overwrite=True)
        optimizer = getattr(self.model, "optimizer", None)
        if optimizer is not None and optimizer.built:
            with atomic_write(self._path(_OPTIMIZER), overwrite=True) as temporary:
                with open(temporary, "wb") as handle:
                    numpy.savez(handle, *optimizer.get_state())
        with atomic_write(self._path(_METADATA), overwrite=True) as temporary:
            with open(temporary, "w", encoding="utf-8") as handle:
                json.dump({"epoch": completed_epoch}, handle)
