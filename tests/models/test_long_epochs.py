"""Epochs of thousands of batches: fit, evaluate and predict cost the same per
step at step 5,000 as at step 1 (a per-step wrapper that nested one call
deeper each step once died with RecursionError at ~1,000 batches)."""
import sys

import numpy
import pytest

import minikeras as mk
from minikeras import layers

# More batches than Python's recursion limit (even half of them, for the
# validation split below), so that any per-step nesting fails.
STEPS = max(5000, 2 * sys.getrecursionlimit() + 1000)


def _tiny_model():
    model = mk.Sequential([layers.Input(shape=(2,)), layers.Dense(1)])
    model.compile(optimizer=mk.optimizers.SGD(0.01), loss="mse", metrics=["mae"])
    return model


def _data(n):
    rng = numpy.random.default_rng(0)
    x = rng.normal(size=(n, 2)).astype("float32")
    y = (x @ numpy.array([[1.0], [-2.0]], dtype="float32") + 0.5).astype("float32")
    return x, y


@pytest.mark.parametrize("shuffle", [False, True])
def test_fit_runs_an_epoch_of_thousands_of_batches(shuffle):
    x, y = _data(STEPS)
    model = _tiny_model()
    seen = []
    counter = mk.callbacks.LambdaCallback(on_train_batch_end=lambda batch, logs: seen.append(batch))
    history = model.fit(x, y, batch_size=1, epochs=1, shuffle=shuffle, verbose=0, callbacks=[counter])
    assert seen == list(range(STEPS))
    assert history.history["loss"][0] < 1.0  # it learned y = x·w + b on the way


def test_fit_with_keras_default_batch_size_on_mnist_sized_data():
    x, y = _data(60000)  # 1,875 batches of 32: Keras's default batch size on MNIST
    model = _tiny_model()
    history = model.fit(x, y, epochs=1, verbose=0)
    assert numpy.isfinite(history.history["loss"][0])


@pytest.mark.parametrize("shuffle", [False, True])
def test_fit_with_validation_of_thousands_of_batches(shuffle):
    x, y = _data(STEPS)
    model = _tiny_model()
    history = model.fit(x, y, batch_size=1, epochs=1, shuffle=shuffle, verbose=0, validation_split=0.5,
                        validation_batch_size=1)
    assert set(history.history) == {"loss", "mae", "val_loss", "val_mae"}


def test_evaluate_over_thousands_of_batches():
    x, y = _data(STEPS)
    model = _tiny_model()
    result = model.evaluate(x, y, batch_size=1, verbose=0, return_dict=True)
    expected = model.evaluate(x, y, batch_size=STEPS, verbose=0, return_dict=True)
    assert result["loss"] == pytest.approx(expected["loss"], rel=1e-4)


def test_predict_over_thousands_of_batches():
    x, _ = _data(STEPS)
    model = _tiny_model()
    step_by_step = model.predict(x, batch_size=1, verbose=0)
    at_once = model.predict(x, batch_size=STEPS, verbose=0)
    assert step_by_step.shape == (STEPS, 1)
    numpy.testing.assert_allclose(step_by_step, at_once, rtol=1e-5, atol=1e-6)
