"""Keras-style user scripts for utils data, keras.random and ops names, run
as subprocesses with ``import minikeras as keras`` and nothing else changed."""
import os
import subprocess
import sys
import textwrap

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _run(script):
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    result = subprocess.run([sys.executable, "-c", textwrap.dedent(script)], cwd=ROOT, env=env,
                            capture_output=True, text=True, timeout=240)
    assert result.returncode == 0, f"script failed:\n{result.stdout}\n{result.stderr}"
    return result


TEXT_PIPELINE = """
import math

import numpy as np
import minikeras as keras
from minikeras import layers
from minikeras.preprocessing.sequence import pad_sequences

keras.utils.set_random_seed(0)
rng = np.random.default_rng(0)
# Tiny "reviews": positive ones mention word 7.
sequences, labels = [], []
for _ in range(400):
    words = rng.integers(8, 50, rng.integers(3, 25)).tolist()
    label = int(rng.random() < 0.5)
    if label:
        words.insert(int(rng.integers(0, len(words))), 7)
    sequences.append(words)
    labels.append(label)
x = pad_sequences(sequences, maxlen=16, padding="post", truncating="post")
assert x.shape == (400, 16) and x.dtype == np.int32
assert (keras.utils.pad_sequences(sequences, maxlen=16, padding="post", truncating="post") == x).all()
y = keras.utils.to_categorical(labels, num_classes=2)


class Reviews(keras.utils.PyDataset):
    def __init__(self, x, y, batch_size, **kwargs):
        super().__init__(**kwargs)
        self.x, self.y, self.batch_size = x, y, batch_size
        self.order = np.arange(len(x))

    def __len__(self):
        return math.ceil(len(self.x) / self.batch_size)

    def __getitem__(self, index):
        rows = self.order[index * self.batch_size:(index + 1) * self.batch_size]
        return self.x[rows], self.y[rows]

    def on_epoch_end(self):
        np.random.shuffle(self.order)


schedule = keras.optimizers.schedules.ExponentialDecay(0.05, decay_steps=10, decay_rate=0.9)
curve = schedule(np.arange(100))          # plotting a schedule, as the Keras guides do
assert curve.shape == (100,) and (np.diff(curve) < 0).all()

model = keras.Sequential([
    layers.Input(shape=(16,)),
    layers.Embedding(50, 8),
    layers.Flatten(),
    layers.Dense(16, activation="relu"),
    layers.Dense(2, activation="softmax"),
])
model.compile(optimizer=keras.optimizers.Adam(learning_rate=schedule), loss="categorical_crossentropy",
              metrics=["accuracy"])
train = Reviews(x[:320], y[:320], 32, workers=2, use_multiprocessing=False, max_queue_size=4)
history = model.fit(train, epochs=15, verbose=0)
loss, accuracy = model.evaluate(Reviews(x[320:], y[320:], 40), verbose=0)
print("accuracy", accuracy)
assert history.history["loss"][-1] < history.history["loss"][0]
assert accuracy > 0.8, accuracy
"""

RANDOM_AND_OPS = """
import numpy as np
import minikeras as keras
from minikeras import layers, ops


class NoisyIdentity(layers.Layer):
    # The Keras 3 pattern: a layer owns a SeedGenerator and draws from it in call().
    def __init__(self, rate, seed=None, **kwargs):
        super().__init__(**kwargs)
        self.rate = rate
        self.seed_generator = keras.random.SeedGenerator(seed)

    def call(self, inputs, training=None):
        if training:
            return keras.random.dropout(inputs, self.rate, seed=self.seed_generator)
        return inputs


keras.utils.set_random_seed(1337)
layer = NoisyIdentity(0.5, seed=42)
x = ops.ones((8, 16))
first, second = layer(x, training=True), layer(x, training=True)
assert not np.array_equal(ops.convert_to_tensor(first).numpy(), second.numpy())
assert np.array_equal(layer(x).numpy(), x.numpy())
assert set(np.unique(first.numpy())) <= {0.0, 2.0}

class Sampling(layers.Layer):
    # The Keras VAE example's sampling layer, unchanged.
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.seed_generator = keras.random.SeedGenerator(1337)

    def call(self, inputs):
        z_mean, z_log_var = inputs
        batch = ops.shape(z_mean)[0]
        dim = ops.shape(z_mean)[1]
        epsilon = keras.random.normal(shape=(batch, dim), seed=self.seed_generator)
        return z_mean + ops.exp(0.5 * z_log_var) * epsilon


z_mean, z_log_var = ops.zeros((512, 2)), ops.zeros((512, 2))
z = Sampling()([z_mean, z_log_var])
assert ops.shape(z) == (512, 2) and 0.8 < float(np.std(z.numpy())) < 1.2

values = ops.convert_to_tensor(np.arange(10.0))
assert ops.shape(values) == (10,)
shuffled = keras.random.shuffle(values, seed=keras.random.SeedGenerator(3))
assert sorted(shuffled.numpy().tolist()) == list(range(10))
labels = keras.random.randint((6,), 0, 4, seed=7)
assert ops.shape(ops.one_hot(labels, num_classes=4)) == (6, 4)
matches = ops.convert_to_tensor(np.arange(10.0)) == shuffled
assert matches.dtype == np.bool_ and int(ops.sum(ops.cast(matches, "int32")).numpy()) < 10
assert (labels >= 0).numpy().all() and (labels < 4).numpy().all()
assert (labels != 4).numpy().all() and not (labels == 4).numpy().any()
print("ok")
"""

FINITE_GENERATOR = """
import warnings

import numpy as np
import minikeras as keras
from minikeras import layers

rng = np.random.default_rng(0)
x = rng.normal(size=(96, 4)).astype("float32")
y = x.sum(axis=1, keepdims=True)


def batches():
    for start in range(0, 96, 32):
        yield x[start:start + 32], y[start:start + 32]


model = keras.Sequential([layers.Input(shape=(4,)), layers.Dense(1)])
model.compile(optimizer="sgd", loss="mse")
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    history = model.fit(batches(), epochs=5, verbose=0)
messages = [str(w.message) for w in caught]
assert any("ran out of data" in m for m in messages), messages
assert len(history.history["loss"]) == 1 and history.history["loss"][0] > 0
print("epochs", len(history.history["loss"]))
"""


@pytest.mark.parametrize("script", [TEXT_PIPELINE, RANDOM_AND_OPS, FINITE_GENERATOR],
                         ids=["text_pipeline", "random_and_ops", "finite_generator"])
def test_keras_style_script_runs(script):
    _run(script)
