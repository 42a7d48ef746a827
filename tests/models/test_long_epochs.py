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


def test_steps_per_execution_over_thousands_of_batches():
    x, y = _data(STEPS)
    model = _tiny_model()
    model.compile(optimizer=mk.optimizers.SGD(0.01), loss="mse", steps_per_execution=64)
    seen = []
    counter = mk.callbacks.LambdaCallback(on_train_batch_end=lambda batch, logs: seen.append(batch))
    history = model.fit(x, y, batch_size=1, epochs=1, shuffle=False, verbose=0, callbacks=[counter])
    groups = -(-STEPS // 64)
    assert seen == [64 * k + 63 for k in range(groups)]  # once per 64 steps, Keras's step numbers
    assert int(model.optimizer.iterations) == STEPS  # every batch trained
    assert history.history["loss"][0] < 1.0


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


class _Rows(mk.utils.PyDataset):
    """One sample per batch, as a PyDataset."""

    def __init__(self, x, y):
        super().__init__()
        self.x, self.y = x, y

    def __len__(self):
        return len(self.x)

    def __getitem__(self, index):
        return self.x[index:index + 1], self.y[index:index + 1]


class _Loader:
    """A DataLoader/tf.data stand-in: a fresh pass per iter()."""

    def __init__(self, x, y):
        self.x, self.y = x, y

    def __iter__(self):
        return ([self.x[i:i + 1], self.y[i:i + 1]] for i in range(len(self.x)))

    def __len__(self):
        return len(self.x)


# Past the recursion limit, enough for any per-step nesting to fail, and
# short enough to run four sources in a few seconds.
SOURCE_STEPS = sys.getrecursionlimit() + 200


@pytest.mark.parametrize("source", ["generator", "py_dataset", "iterable", "on_device"])
def test_long_epochs_from_every_kind_of_source(source):
    x, y = _data(SOURCE_STEPS)
    model = _tiny_model()
    if source == "generator":
        data = ((x[i:i + 1], y[i:i + 1]) for i in range(SOURCE_STEPS))
        kwargs = {"steps_per_epoch": SOURCE_STEPS}
    elif source == "py_dataset":
        data, kwargs = _Rows(x, y), {}
    elif source == "iterable":
        data, kwargs = _Loader(x, y), {}
    else:  # already on the device: batched there
        data, kwargs = mk.tensor(x), {"y": mk.tensor(y), "batch_size": 1}
    seen = []
    counter = mk.callbacks.LambdaCallback(on_train_batch_end=lambda batch, logs: seen.append(batch))
    history = model.fit(data, epochs=1, verbose=0, callbacks=[counter], **kwargs)
    assert len(seen) == SOURCE_STEPS and numpy.isfinite(history.history["loss"][0])
    if source == "on_device":  # predict batches device data there too
        assert model.predict(data, batch_size=1, verbose=0).shape == (SOURCE_STEPS, 1)
