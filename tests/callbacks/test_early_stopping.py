"""EarlyStopping through real fit() runs, with scripted monitored values."""
import numpy
import pytest

from minikeras.callbacks import EarlyStopping
from tests.callbacks.conftest import InjectLogs, RecordWeights


def fit(model, data, callbacks, epochs=20):
    x, y = data
    return model.fit(x, y, batch_size=16, epochs=epochs, verbose=0, shuffle=False, callbacks=callbacks)


def test_stops_after_patience_epochs_without_improvement(data, make_model):
    model = make_model()
    values = [5.0, 4.0, 3.0, 3.5, 3.2, 3.1, 2.0, 1.0] + [1.0] * 12
    stop = EarlyStopping(monitor="val_loss", patience=3)
    history = fit(model, data, [InjectLogs(val_loss=values), stop])
    # Best at epoch 2; epochs 3, 4, 5 do not improve -> stop at epoch 5.
    assert history.epoch == [0, 1, 2, 3, 4, 5]
    assert stop.stopped_epoch == 5
    assert stop.best == 3.0 and stop.best_epoch == 2
    assert model.stop_training


def test_patience_zero_stops_at_first_non_improvement(data, make_model):
    stop = EarlyStopping(monitor="val_loss", patience=0)
    history = fit(make_model(), data, [InjectLogs(val_loss=[3.0, 2.0, 2.0, 1.0] + [0.0] * 16), stop])
    assert history.epoch == [0, 1, 2]


def test_min_delta_requires_a_large_enough_improvement(data, make_model):
    stop = EarlyStopping(monitor="val_loss", patience=1, min_delta=0.5)
    values = [10.0, 9.7, 9.6, 9.0] + [0.0] * 16
    history = fit(make_model(), data, [InjectLogs(val_loss=values), stop])
    # 9.7 is not 0.5 better than 10: wait 1 >= patience at epoch 1.
    assert history.epoch == [0, 1]


def test_auto_mode_maximizes_accuracy_and_auc():
    assert EarlyStopping(monitor="val_accuracy").mode == "max"
    assert EarlyStopping(monitor="auc").mode == "max"
    assert EarlyStopping(monitor="val_loss").mode == "min"
    assert EarlyStopping(monitor="val_accuracy", mode="min").mode == "min"


def test_max_mode_stops_when_accuracy_falls(data, make_model):
    stop = EarlyStopping(monitor="val_accuracy", patience=1)
    values = [0.5, 0.6, 0.55, 0.58] + [0.9] * 16
    history = fit(make_model(), data, [InjectLogs(val_accuracy=values), stop])
    assert history.epoch == [0, 1, 2]
    assert stop.best == 0.6


def test_restore_best_weights_when_stopping(data, make_model):
    model = make_model()
    record = RecordWeights()
    stop = EarlyStopping(monitor="val_loss", patience=2, restore_best_weights=True)
    fit(model, data, [InjectLogs(val_loss=[3.0, 1.0, 2.0, 2.5] + [0.0] * 16), record, stop])
    assert len(record.per_epoch) == 4
    for restored, best in zip(model.get_weights(), record.per_epoch[1]):
        numpy.testing.assert_array_equal(restored, best)
    assert not numpy.array_equal(model.get_weights()[0], record.per_epoch[-1][0])


def test_restore_best_weights_also_when_training_runs_to_the_end(data, make_model):
    model = make_model()
    record = RecordWeights()
    stop = EarlyStopping(monitor="val_loss", patience=10, restore_best_weights=True)
    fit(model, data, [InjectLogs(val_loss=[3.0, 2.0, 1.0, 4.0, 5.0]), record, stop], epochs=5)
    assert stop.stopped_epoch == 0
    for restored, best in zip(model.get_weights(), record.per_epoch[2]):
        numpy.testing.assert_array_equal(restored, best)


def test_without_restore_the_last_weights_stay(data, make_model):
    model = make_model()
    record = RecordWeights()
    fit(model, data, [InjectLogs(val_loss=[3.0, 1.0, 2.0, 2.5] + [0.0] * 16), record,
                      EarlyStopping(patience=2)])
    for final, last in zip(model.get_weights(), record.per_epoch[-1]):
        numpy.testing.assert_array_equal(final, last)


def test_baseline_must_be_beaten_to_reset_patience(data, make_model):
    values = [5.0, 4.0, 3.0, 3.5, 3.4, 3.3] + [3.3] * 14
    # Improvements above the baseline do not reset the patience counter, so
    # the first epoch that does not improve (epoch 3) stops training ...
    stop = EarlyStopping(monitor="val_loss", patience=2, baseline=1.0)
    history = fit(make_model(), data, [InjectLogs(val_loss=values), stop])
    assert history.epoch == [0, 1, 2, 3]
    # ... whereas without a baseline they do, and it stops two epochs later.
    history = fit(make_model(), data, [InjectLogs(val_loss=values), EarlyStopping(patience=2)])
    assert history.epoch == [0, 1, 2, 3, 4]


def test_beating_the_baseline_resets_patience(data, make_model):
    values = [5.0, 4.0, 0.5, 0.6, 0.7, 0.8] + [0.9] * 14
    history = fit(make_model(), data, [InjectLogs(val_loss=values), EarlyStopping(patience=2, baseline=1.0)])
    assert history.epoch == [0, 1, 2, 3, 4]


def test_start_from_epoch_ignores_warm_up_epochs(data, make_model):
    stop = EarlyStopping(monitor="val_loss", patience=0, start_from_epoch=3)
    values = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0] + [0.0] * 14
    history = fit(make_model(), data, [InjectLogs(val_loss=values), stop])
    # Monitoring starts at epoch 3 (best 4.0); epoch 4 is worse -> stop.
    assert history.epoch == [0, 1, 2, 3, 4]


def test_real_training_loss_is_monitored(data, make_model):
    # The loss of a converging model keeps improving: no early stop.
    stop = EarlyStopping(monitor="loss", patience=0)
    history = fit(make_model(), data, [stop], epochs=4)
    assert history.epoch == [0, 1, 2, 3]
    assert stop.stopped_epoch == 0
    assert stop.best == history.history["loss"][-1]


def test_missing_metric_warns_and_does_not_stop(data, make_model):
    stop = EarlyStopping(monitor="val_loss", patience=0)
    with pytest.warns(UserWarning, match="val_loss.*not available. Available metrics are: loss,mae"):
        history = fit(make_model(), data, [stop], epochs=2)
    assert history.epoch == [0, 1]


def test_verbose_messages(data, make_model, capsys):
    stop = EarlyStopping(monitor="val_loss", patience=0, verbose=1, restore_best_weights=True)
    fit(make_model(), data, [InjectLogs(val_loss=[1.0, 2.0] + [0.0] * 18), stop])
    out = capsys.readouterr().out
    assert "Epoch 2: early stopping" in out
    assert "Restoring model weights from the end of the best epoch: 1." in out


def test_instance_is_reusable_across_fits(data, make_model):
    model = make_model()
    stop = EarlyStopping(monitor="val_loss", patience=0)
    fit(model, data, [InjectLogs(val_loss=[1.0, 2.0] + [0.0] * 18), stop])
    history = fit(model, data, [InjectLogs(val_loss=[5.0, 4.0, 3.0]), stop], epochs=3)
    assert history.epoch == [0, 1, 2]


def test_bad_arguments():
    with pytest.raises(ValueError, match="patience must be a non-negative int"):
        EarlyStopping(patience=-1)
    with pytest.raises(ValueError, match="start_from_epoch"):
        EarlyStopping(start_from_epoch=1.5)
    with pytest.warns(UserWarning, match="mode 'sideways' is unknown"):
        assert EarlyStopping(mode="sideways").mode == "min"
