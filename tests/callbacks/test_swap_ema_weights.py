"""SwapEMAWeights (minikeras/callbacks/swap_ema_weights.py)."""
import numpy
import pytest

import minikeras as mk
from minikeras.callbacks import Callback, SwapEMAWeights
from minikeras.device import to_host


class _Record(Callback):
    """Records the model's first kernel at the hooks SwapEMAWeights uses."""

    def __init__(self):
        super().__init__()
        self.seen = {}

    def on_test_begin(self, logs=None):
        self.seen.setdefault("test", []).append(self.model.get_weights()[0].copy())


def _averages(model):
    return [to_host(average).copy() for average in model.optimizer._moving_averages]


def test_evaluate_and_predict_use_the_averages_then_restore(data, make_model):
    x, y = data
    model = make_model(optimizer=mk.optimizers.SGD(learning_rate=0.05, use_ema=True, ema_momentum=0.9))
    model.fit(x, y, epochs=2, batch_size=16, verbose=0)
    raw = [w.copy() for w in model.get_weights()]
    averages = _averages(model)
    assert not numpy.allclose(raw[0], averages[0])
    swap = SwapEMAWeights()
    with_ema = model.evaluate(x, y, verbose=0, callbacks=[swap])
    for weight, before in zip(model.get_weights(), raw):
        numpy.testing.assert_array_equal(weight, before)  # swapped back
    reference = make_model()
    reference.set_weights(averages)
    numpy.testing.assert_allclose(with_ema, reference.evaluate(x, y, verbose=0), rtol=1e-5)
    numpy.testing.assert_allclose(model.predict(x, verbose=0, callbacks=[swap]), reference.predict(x, verbose=0),
                                  rtol=1e-5)
    for weight, before in zip(model.get_weights(), raw):
        numpy.testing.assert_array_equal(weight, before)


def test_validation_during_fit_sees_the_averages(data, make_model):
    x, y = data
    model = make_model(optimizer=mk.optimizers.SGD(learning_rate=0.05, use_ema=True))
    record = _Record()
    model.fit(x, y, epochs=2, batch_size=16, verbose=0, validation_data=(x, y), callbacks=[SwapEMAWeights(), record])
    # The last validation ran after the last update: it saw the final averages, then the raw weights came back.
    assert len(record.seen["test"]) == 2
    numpy.testing.assert_array_equal(record.seen["test"][-1], _averages(model)[0])
    assert not numpy.array_equal(model.get_weights()[0], _averages(model)[0])


def test_swap_on_epoch_leaves_the_averages_after_training(data, make_model):
    x, y = data
    model = make_model(optimizer=mk.optimizers.SGD(learning_rate=0.05, use_ema=True, ema_momentum=0.5))
    model.fit(x, y, epochs=3, batch_size=16, verbose=0, callbacks=[SwapEMAWeights(swap_on_epoch=True)])
    numpy.testing.assert_array_equal(model.get_weights()[0], _averages(model)[0])


def test_refuses_an_optimizer_without_ema(data, make_model):
    x, y = data
    model = make_model()
    model.fit(x, y, epochs=1, verbose=0)
    with pytest.raises(ValueError, match="use_ema=True"):
        model.evaluate(x, y, verbose=0, callbacks=[SwapEMAWeights()])
