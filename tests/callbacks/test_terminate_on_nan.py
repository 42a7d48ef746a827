"""TerminateOnNaN: training stops at the first batch whose loss is NaN or inf."""
import numpy
import pytest

from minikeras.callbacks import LambdaCallback, TerminateOnNaN


def run(model, x, y, capsys):
    batches = []
    counter = LambdaCallback(on_train_batch_end=lambda batch, logs: batches.append(batch))
    history = model.fit(x, y, batch_size=8, epochs=3, verbose=0, shuffle=False,
                        callbacks=[TerminateOnNaN(), counter])
    return history, batches, capsys.readouterr().out


def test_stops_on_nan_loss_and_says_so(data, make_model, capsys):
    x, y = data
    x = x.copy()
    x[21, 2] = numpy.nan  # in batch 2 (samples 16..23)
    model = make_model()
    history, batches, out = run(model, x, y, capsys)
    assert batches == [0, 1, 2]
    assert "Batch 2: Invalid loss, terminating training" in out
    assert model.stop_training
    assert history.epoch == [0]
    assert numpy.isnan(history.history["loss"][0])


@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")  # inf - inf in backward
def test_stops_on_infinite_loss(data, make_model, capsys):
    x, y = data
    y = y.copy()
    y[40] = numpy.inf  # batch 5
    history, batches, out = run(make_model(), x, y, capsys)
    assert batches == [0, 1, 2, 3, 4, 5]
    assert "Batch 5: Invalid loss, terminating training" in out


def test_finite_losses_train_to_the_end(data, make_model, capsys):
    x, y = data
    history, batches, out = run(make_model(), x, y, capsys)
    assert history.epoch == [0, 1, 2]
    assert len(batches) == 24
    assert "Invalid loss" not in out
