"""ModelCheckpoint through real fit() runs: file names, contents, save_best_only."""
import os

import numpy
import pytest

import minikeras as mk
from minikeras.callbacks import ModelCheckpoint
from tests.callbacks.conftest import InjectLogs, RecordWeights


def fit(model, data, callbacks, epochs=4, batch_size=16):
    x, y = data
    return model.fit(x, y, batch_size=batch_size, epochs=epochs, verbose=0, shuffle=False, callbacks=callbacks)


def assert_weights_equal(actual, expected):
    assert len(actual) == len(expected)
    for a, e in zip(actual, expected):
        numpy.testing.assert_array_equal(a, e)


def test_every_epoch_with_formatted_names(data, make_model, tmp_path):
    model = make_model()
    record = RecordWeights()
    pattern = str(tmp_path / "model.{epoch:02d}-{loss:.3f}.h5")
    history = fit(model, data, [record, ModelCheckpoint(pattern, monitor="loss")])
    expected = [f"model.{epoch + 1:02d}-{loss:.3f}.h5" for epoch, loss in enumerate(history.history["loss"])]
    assert sorted(os.listdir(tmp_path)) == expected
    for name, weights in zip(expected, record.per_epoch):
        restored = mk.models.load_model(tmp_path / name)
        assert_weights_equal(restored.get_weights(), weights)


def test_save_best_only_writes_only_improvements(data, make_model, tmp_path):
    pattern = str(tmp_path / "best.{epoch}.h5")
    checkpoint = ModelCheckpoint(pattern, monitor="val_loss", save_best_only=True)
    fit(make_model(), data, [InjectLogs(val_loss=[3.0, 2.0, 2.5, 1.0, 1.5]), checkpoint], epochs=5)
    assert sorted(os.listdir(tmp_path)) == ["best.1.h5", "best.2.h5", "best.4.h5"]
    assert checkpoint.best == 1.0


def test_save_best_only_keeps_the_best_weights_in_one_file(data, make_model, tmp_path):
    model = make_model()
    record = RecordWeights()
    path = tmp_path / "best.h5"
    fit(model, data, [InjectLogs(val_loss=[3.0, 1.0, 2.5, 2.0]), record,
                      ModelCheckpoint(path, save_best_only=True)])
    assert_weights_equal(mk.models.load_model(path).get_weights(), record.per_epoch[1])
    assert os.listdir(tmp_path) == ["best.h5"]  # no temporary files left behind


def test_mode_max_for_accuracy_and_initial_value_threshold(data, make_model, tmp_path):
    pattern = str(tmp_path / "acc.{epoch}.h5")
    checkpoint = ModelCheckpoint(pattern, monitor="val_accuracy", save_best_only=True,
                                 initial_value_threshold=0.55)
    assert checkpoint.mode == "max"
    fit(make_model(), data, [InjectLogs(val_accuracy=[0.5, 0.6, 0.58, 0.7]), checkpoint])
    assert sorted(os.listdir(tmp_path)) == ["acc.2.h5", "acc.4.h5"]


def test_save_weights_only(data, make_model, tmp_path):
    model = make_model()
    path = tmp_path / "weights.h5"
    fit(model, data, [ModelCheckpoint(path, save_weights_only=True)], epochs=2)
    other = make_model()
    assert not numpy.array_equal(other.get_weights()[0], model.get_weights()[0])
    other.load_weights(path)
    assert_weights_equal(other.get_weights(), model.get_weights())
    with pytest.raises(ValueError, match="No model config found"):
        mk.models.load_model(path)


def test_save_freq_in_batches(data, make_model, tmp_path):
    pattern = str(tmp_path / "step-{epoch}-{batch}.h5")
    fit(make_model(), data, [ModelCheckpoint(pattern, save_freq=3, save_weights_only=True)], epochs=2)
    # 4 batches per epoch, a save every 3 batches, counted across epochs: after
    # batch 3 of epoch 1 and batch 2 of epoch 2 (both 1-based, as in the names).
    assert sorted(os.listdir(tmp_path)) == ["step-1-3.h5", "step-2-2.h5"]


def test_creates_missing_folders(data, make_model, tmp_path):
    path = tmp_path / "a" / "b" / "model.{epoch}.h5"
    fit(make_model(), data, [ModelCheckpoint(str(path))], epochs=1)
    assert os.listdir(tmp_path / "a" / "b") == ["model.1.h5"]


def test_missing_monitor_warns_and_skips(data, make_model, tmp_path):
    checkpoint = ModelCheckpoint(str(tmp_path / "m.h5"), monitor="val_loss", save_best_only=True)
    with pytest.warns(UserWarning, match="Can save best model only with val_loss available, skipping"):
        fit(make_model(), data, [checkpoint], epochs=1)
    assert os.listdir(tmp_path) == []


def test_verbose_messages(data, make_model, tmp_path, capsys):
    path = str(tmp_path / "m.h5")
    fit(make_model(), data, [InjectLogs(val_loss=[2.0, 3.0]),
                             ModelCheckpoint(path, save_best_only=True, verbose=1)], epochs=2)
    out = capsys.readouterr().out
    assert f"Epoch 1: val_loss improved from inf to 2.00000, saving model to {path}" in out
    assert "Epoch 2: val_loss did not improve from 2.00000" in out


def test_bad_format_field_names_the_path(data, make_model, tmp_path):
    pattern = str(tmp_path / "m.{val_acc:.2f}.h5")
    with pytest.raises(KeyError, match="Failed to format this callback filepath"):
        fit(make_model(), data, [ModelCheckpoint(pattern)], epochs=1)


def test_bad_save_freq():
    with pytest.raises(ValueError, match="unrecognized save_freq"):
        ModelCheckpoint("m.h5", save_freq="batch")
    with pytest.raises(ValueError, match="unrecognized save_freq"):
        ModelCheckpoint("m.h5", save_freq=0)


def test_a_model_checkpoint_name_without_a_model_suffix_is_refused_up_front(tmp_path):
    with pytest.raises(ValueError, match="must end in `.keras`"):
        ModelCheckpoint(str(tmp_path / "ckpt-{epoch}"))
    ModelCheckpoint(str(tmp_path / "ckpt-{epoch}"), save_weights_only=True)  # weights keep any name
