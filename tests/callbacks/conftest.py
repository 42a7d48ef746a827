"""Tiny models and data for the callback tests."""
import numpy
import pytest

import minikeras as mk
from minikeras import layers
from minikeras.callbacks import Callback


@pytest.fixture
def data():
    """64 samples of a noisy linear regression problem (4 features -> 1)."""
    rng = numpy.random.default_rng(0)
    x = rng.normal(size=(64, 4)).astype("float32")
    y = (x @ numpy.array([[1.0], [-2.0], [0.5], [3.0]], dtype="float32") + 0.1).astype("float32")
    return x, y


@pytest.fixture
def make_model():
    """A compiled 4 -> 8 -> 1 MLP (SGD by default)."""

    def make(optimizer=None, metrics=("mae",)):
        model = mk.Sequential([layers.Dense(8, activation="relu", input_shape=(4,)), layers.Dense(1)])
        model.compile(optimizer=optimizer or mk.optimizers.SGD(learning_rate=0.01),
                      loss=mk.losses.MeanSquaredError(), metrics=list(metrics))
        return model

    return make


class InjectLogs(Callback):
    """Writes scripted values into the epoch logs (placed before the callback
    under test, which then sees them), so monitored sequences are exact."""

    def __init__(self, **sequences):
        super().__init__()
        self.sequences = sequences

    def on_epoch_end(self, epoch, logs=None):
        for key, values in self.sequences.items():
            logs[key] = values[epoch]


class RecordWeights(Callback):
    """Keeps a copy of the model's weights at the end of every epoch."""

    def __init__(self):
        super().__init__()
        self.per_epoch = []

    def on_epoch_end(self, epoch, logs=None):
        self.per_epoch.append(self.model.get_weights())
