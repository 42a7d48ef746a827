"""BackupAndRestore (minikeras/callbacks/backup_and_restore.py)."""
import json
import os

import numpy
import pytest

from minikeras.callbacks import BackupAndRestore, Callback


class _Crash(Callback):
    def __init__(self, at_epoch):
        super().__init__()
        self.at_epoch = at_epoch

    def on_epoch_end(self, epoch, logs=None):
        if epoch == self.at_epoch:
            raise RuntimeError("crash")


def test_resume_continues_bit_for_bit(data, make_model, tmp_path):
    x, y = data
    backup = str(tmp_path / "backup")
    initial = make_model(metrics=()).get_weights()
    reference = make_model(metrics=())
    reference.set_weights(initial)
    full = reference.fit(x, y, epochs=4, batch_size=16, shuffle=False, verbose=0)
    crashed = make_model(metrics=())
    crashed.set_weights(initial)
    with pytest.raises(RuntimeError, match="crash"):
        crashed.fit(x, y, epochs=4, batch_size=16, shuffle=False, verbose=0,
                    callbacks=[BackupAndRestore(backup), _Crash(1)])
    with open(os.path.join(backup, "training_metadata.json")) as handle:
        assert json.load(handle) == {"epoch": 1}
    resumed = make_model(metrics=())  # fresh weights: the backup must replace them
    history = resumed.fit(x, y, epochs=4, batch_size=16, shuffle=False, verbose=0, callbacks=[BackupAndRestore(backup)])
    assert history.epoch == [2, 3]
    numpy.testing.assert_allclose(history.history["loss"], full.history["loss"][2:], rtol=1e-6)
    for got, want in zip(resumed.get_weights(), reference.get_weights()):
        numpy.testing.assert_allclose(got, want, rtol=1e-6)
    assert os.listdir(backup) == []  # deleted after a completed fit


def test_batch_frequency_and_bad_arguments(data, make_model, tmp_path):
    x, y = data
    backup = tmp_path / "b"
    callback = BackupAndRestore(backup, save_freq=2, delete_checkpoint=False)
    make_model().fit(x, y, epochs=1, batch_size=16, verbose=0, callbacks=[callback])
    assert sorted(os.listdir(backup)) == ["latest.weights.h5", "optimizer_state.npz", "training_metadata.json"]
    with pytest.raises(ValueError, match="save_freq"):
        BackupAndRestore(backup, save_freq=0)
    with pytest.raises(ValueError, match="backup_dir"):
        BackupAndRestore("")
