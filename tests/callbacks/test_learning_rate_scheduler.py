"""LearningRateScheduler: the optimizer's learning rate follows the schedule."""
import numpy
import pytest

import minikeras as mk
from minikeras.callbacks import LambdaCallback, LearningRateScheduler


def fit(model, data, callbacks, epochs=4):
    x, y = data
    return model.fit(x, y, batch_size=16, epochs=epochs, verbose=0, shuffle=False, callbacks=callbacks)


def test_one_argument_schedule_sets_the_rate_each_epoch(data, make_model):
    model = make_model()
    seen = []
    spy = LambdaCallback(on_epoch_begin=lambda epoch, logs: seen.append(model.optimizer.learning_rate))
    history = fit(model, data, [LearningRateScheduler(lambda epoch: 0.1 / (epoch + 1)), spy])
    assert seen == [0.1, 0.05, 0.1 / 3, 0.025]
    assert history.history["learning_rate"] == seen
    assert model.optimizer.learning_rate == 0.025


def test_two_argument_schedule_receives_the_current_rate(data, make_model):
    model = make_model(optimizer=mk.optimizers.SGD(learning_rate=0.08))
    calls = []

    def halve(epoch, lr):
        calls.append((epoch, lr))
        return lr / 2

    history = fit(model, data, [LearningRateScheduler(halve)])
    assert calls == [(0, 0.08), (1, 0.04), (2, 0.02), (3, 0.01)]
    assert history.history["learning_rate"] == [0.04, 0.02, 0.01, 0.005]


def test_the_scheduled_rate_is_the_one_training_uses(data, make_model):
    # A zero learning rate from epoch 2 on freezes the weights from then.
    model = make_model()
    weights = []
    record = LambdaCallback(on_epoch_end=lambda epoch, logs: weights.append(model.get_weights()))
    fit(model, data, [LearningRateScheduler(lambda epoch: 0.05 if epoch < 2 else 0.0), record])
    assert not numpy.array_equal(weights[0][0], weights[1][0])
    for frozen in weights[2:]:
        for a, b in zip(frozen, weights[1]):
            numpy.testing.assert_array_equal(a, b)


def test_verbose_prints_the_new_rate(data, make_model, capsys):
    fit(make_model(), data, [LearningRateScheduler(lambda epoch: 0.5, verbose=1)], epochs=1)
    assert "Epoch 1: LearningRateScheduler setting learning rate to 0.5." in capsys.readouterr().out


def test_non_numeric_schedule_output_is_rejected(data, make_model):
    with pytest.raises(ValueError, match="output of the `schedule` function should be a float. Got: 'fast'"):
        fit(make_model(), data, [LearningRateScheduler(lambda epoch: "fast")], epochs=1)


def test_schedule_must_be_callable():
    with pytest.raises(TypeError, match="expects a callable schedule"):
        LearningRateScheduler(0.1)
