"""TensorBoard on a disk that fills up during fit: training goes on, the
callback warns once and writes nothing more; what it wrote before stays
readable. The full disk is simulated under the tensorboard package's own
``gfile`` (TensorFlow's when installed, its stub otherwise), so the test runs
with or without TensorFlow."""
import errno
import os
import warnings

import pytest

from minikeras.callbacks import TensorBoard
from minikeras.callbacks import tensorboard as tensorboard_module

gfile_owner = pytest.importorskip("tensorboard.compat", reason="the tensorboard package is not installed").tf.io.gfile


class Disk:
    """``room`` bytes of space shared by the files opened on it; past that,
    every write and flush fails as the OS reports a full disk."""

    def __init__(self, room, full_error):
        self.room, self.full_error = room, full_error
        self.used = self.failures = 0

    def file(self, real_file_class):
        disk = self

        class FileOnDisk:
            def __init__(self, path, mode):
                self._file, self.closed = real_file_class(path, mode), False

            def write(self, data):
                if disk.used + len(data) > disk.room:
                    disk.failures += 1
                    raise disk.full_error()
                disk.used += len(data)
                self._file.write(data)

            def flush(self):
                if disk.used >= disk.room:
                    disk.failures += 1
                    raise disk.full_error()
                self._file.flush()

            def close(self):
                self.closed = True
                self._file.close()

            def __getattr__(self, name):  # reading (the stub's EventAccumulator reads through GFile too)
                return getattr(self._file, name)

        return FileOnDisk


def _no_space():
    return OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


def _tensorflow_no_space():  # what TensorFlow's gfile raises: an OpError (the stub's class, no TensorFlow needed)
    from tensorboard.compat.tensorflow_stub import errors

    return errors.ResourceExhaustedError(None, None, "No space left on device")


@pytest.mark.parametrize("full_error", [_no_space, _tensorflow_no_space], ids=["os_error", "tensorflow_error"])
def test_a_disk_that_fills_mid_fit_stops_the_logs_not_the_training(data, make_model, tmp_path, monkeypatch,
                                                                  full_error):
    disk = Disk(room=6000, full_error=full_error)
    monkeypatch.setattr(gfile_owner, "GFile", disk.file(gfile_owner.GFile))
    x, y = data
    callback = TensorBoard(tmp_path, update_freq="batch", histogram_freq=1)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        history = make_model().fit(x, y, epochs=6, batch_size=16, validation_split=0.25, verbose=0,
                                   callbacks=[callback])
    assert len(history.history["loss"]) == 6  # every epoch ran
    full = [w for w in caught if "TensorBoard: writing the logs" in str(w.message)]
    assert len(full) == 1 and issubclass(full[0].category, RuntimeWarning)
    assert str(tmp_path) in str(full[0].message) and "training goes on" in str(full[0].message)
    assert disk.failures == 1  # nothing was written after the first failure
    assert 0 < disk.used <= disk.room
    # The records written before the disk filled are read back.
    from tensorboard.backend.event_processing import event_accumulator

    train = event_accumulator.EventAccumulator(str(tmp_path / "train"))
    train.Reload()
    steps = [event.step for event in train.Tensors("batch_loss")]
    assert steps and steps == list(range(1, len(steps) + 1)) and len(steps) < 6 * 3


def test_the_next_fit_writes_again_once_there_is_room(data, make_model, tmp_path, monkeypatch):
    disk = Disk(room=1500, full_error=_no_space)
    monkeypatch.setattr(gfile_owner, "GFile", disk.file(gfile_owner.GFile))
    x, y = data
    callback, model = TensorBoard(tmp_path, update_freq="batch"), make_model()
    with pytest.warns(RuntimeWarning, match="TensorBoard: writing the logs"):
        model.fit(x, y, epochs=3, batch_size=16, verbose=0, callbacks=[callback])
    disk.room = 10**9  # space was freed
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model.fit(x, y, epochs=1, batch_size=16, verbose=0, callbacks=[callback])
    assert disk.failures == 1


def test_the_json_lines_fallback_stops_the_same_way(data, make_model, tmp_path, monkeypatch):
    monkeypatch.setattr(tensorboard_module, "_tensorboard_writer_module", lambda: None)
    monkeypatch.setattr(tensorboard_module, "_warned_fallback", [True])  # its own warning is tested elsewhere
    opened = []

    def open_on_a_full_disk(path, *args, **kwargs):
        opened.append(path)
        raise _no_space()

    monkeypatch.setattr(tensorboard_module, "open", open_on_a_full_disk, raising=False)
    x, y = data
    with pytest.warns(RuntimeWarning, match=r"TensorBoard: writing the logs .*No space left on device"):
        history = make_model().fit(x, y, epochs=3, verbose=0, callbacks=[TensorBoard(tmp_path)])
    assert len(history.history["loss"]) == 3 and len(opened) == 1
