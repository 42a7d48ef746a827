"""ScalarLogger (minikeras/callbacks/scalar_logger.py); TensorBoard is in test_tensorboard.py."""
import json

import pytest

from minikeras.callbacks import ScalarLogger


def _rows(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_epoch_and_batch_rows(data, make_model, tmp_path):
    x, y = data
    make_model().fit(x, y, epochs=2, batch_size=16, validation_split=0.25, verbose=0,
                     callbacks=[ScalarLogger(tmp_path, update_freq=2)])
    train = _rows(tmp_path / "train" / "scalars.jsonl")
    batch_rows = [row for row in train if "batch_loss" in row]
    epoch_rows = [row for row in train if "epoch_loss" in row]
    assert [row["step"] for row in batch_rows] == [2, 4, 6] and [row["step"] for row in epoch_rows] == [0, 1]
    assert set(epoch_rows[0]) == {"step", "wall_time", "epoch_loss", "epoch_mae"}
    validation = _rows(tmp_path / "validation" / "scalars.jsonl")
    assert [set(row) for row in validation] == [{"step", "wall_time", "epoch_loss", "epoch_mae"}] * 2


def test_update_freq_is_checked(tmp_path):
    with pytest.raises(ValueError, match="update_freq"):
        ScalarLogger(tmp_path, update_freq="sometimes")
