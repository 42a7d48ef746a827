"""ReduceLROnPlateau: the learning rate drops after plateaus of the monitored value."""
import pytest

import minikeras as mk
from minikeras.callbacks import ReduceLROnPlateau
from tests.callbacks.conftest import InjectLogs

BASE = 1.0 / 128


def learning_rates(make_model, data, values, **kwargs):
    """The learning rate of every epoch and the final one, for scripted val_loss
    values, in units of the initial learning rate (1/128, so halving is exact)."""
    model = make_model(optimizer=mk.optimizers.SGD(learning_rate=BASE))
    x, y = data
    history = model.fit(x, y, batch_size=32, epochs=len(values), verbose=0, shuffle=False,
                        callbacks=[InjectLogs(val_loss=values), ReduceLROnPlateau(**kwargs)])
    return [lr / BASE for lr in history.history["learning_rate"]], model.optimizer.learning_rate / BASE


def test_reduces_after_patience_epochs(data, make_model):
    per_epoch, final = learning_rates(make_model, data, [1.0, 0.5, 0.6, 0.7, 0.8, 0.4, 0.45, 0.5],
                                      factor=0.5, patience=2)
    # Best 0.5 at epoch 1; epochs 2 and 3 do not improve -> halve after epoch 3;
    # epoch 4 waits, epoch 5 improves, 6 and 7 do not -> halve after epoch 7.
    assert per_epoch == [1.0, 1.0, 1.0, 1.0, 0.5, 0.5, 0.5, 0.5]
    assert final == 0.25


def test_min_delta_counts_small_changes_as_plateau(data, make_model):
    per_epoch, final = learning_rates(make_model, data, [1.0, 0.99, 0.98, 0.5], factor=0.1, patience=2,
                                      min_delta=0.05)
    assert per_epoch == [1.0, 1.0, 1.0, 0.1]
    assert final == pytest.approx(0.1)


def test_cooldown_and_min_lr(data, make_model):
    per_epoch, final = learning_rates(make_model, data, [1.0] * 8, factor=0.1, patience=1, cooldown=2,
                                      min_lr=0.005 * BASE)
    # Reduced after epoch 1; epoch 2 is in cooldown; the counter reaches 0 at
    # epoch 3, which (patience 1) reduces again, and so on, down to min_lr.
    assert per_epoch == pytest.approx([1.0, 1.0, 0.1, 0.1, 0.01, 0.01, 0.005, 0.005])
    assert final == pytest.approx(0.005)


def test_stays_at_min_lr(data, make_model):
    per_epoch, final = learning_rates(make_model, data, [1.0] * 5, factor=0.5, patience=1, min_lr=0.5 * BASE)
    assert per_epoch == [1.0, 1.0, 0.5, 0.5, 0.5]
    assert final == 0.5


def test_max_mode_for_accuracy(data, make_model):
    model = make_model(optimizer=mk.optimizers.SGD(learning_rate=BASE))
    x, y = data
    model.fit(x, y, batch_size=32, epochs=3, verbose=0,
              callbacks=[InjectLogs(val_accuracy=[0.5, 0.9, 0.8]),
                         ReduceLROnPlateau(monitor="val_accuracy", factor=0.5, patience=1)])
    assert model.optimizer.learning_rate == 0.5 * BASE


def test_missing_metric_warns(data, make_model):
    model = make_model()
    x, y = data
    with pytest.warns(UserWarning, match="Learning rate reduction is conditioned on metric `val_loss`"):
        model.fit(x, y, epochs=1, verbose=0, callbacks=[ReduceLROnPlateau()])


def test_verbose(data, make_model, capsys):
    learning_rates(make_model, data, [1.0, 1.0], factor=0.5, patience=1, verbose=1)
    assert f"Epoch 2: ReduceLROnPlateau reducing learning rate to {0.5 * BASE}." in capsys.readouterr().out


def test_bad_arguments():
    with pytest.raises(ValueError, match="does not support a factor >= 1.0"):
        ReduceLROnPlateau(factor=1.5)
    with pytest.raises(TypeError, match="unexpected keyword"):
        ReduceLROnPlateau(paitence=3)
