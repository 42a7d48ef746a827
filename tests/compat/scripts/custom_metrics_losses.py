"""Custom metrics with variables, Loss subclasses, add_loss in layers and
models, compile without a loss, and a model without trainable weights."""
import warnings

import numpy as np

import minikeras as keras
from minikeras import layers, ops

rng = np.random.default_rng(1)
x = rng.normal(size=(200, 6)).astype("float32")
y = (x[:, :1] + x[:, 1:2] > 0).astype("float32")


class TruePositives(keras.metrics.Metric):
    """Keras 3 style: state in variables made by add_variable / add_weight."""

    def __init__(self, name="true_positives", **kwargs):
        super().__init__(name=name, **kwargs)
        self.hits = self.add_variable(shape=(), initializer="zeros", name="hits")
        self.seen = self.add_weight(name="seen", initializer="zeros")

    def update_state(self, y_true, y_pred, sample_weight=None):
        predicted = np.asarray(y_pred) > 0.5
        actual = np.asarray(y_true) > 0.5
        self.hits.assign_add(float(np.sum(predicted & actual)))
        self.seen.assign_add(float(np.sum(actual)))

    def result(self):
        return self.hits / ops.maximum(self.seen, 1.0)


metric = TruePositives()
assert [v.path for v in metric.variables] == ["true_positives/hits", "true_positives/seen"]
metric.update_state([[1.0], [1.0], [0.0]], [[0.9], [0.2], [0.7]])
assert abs(float(metric.result()) - 0.5) < 1e-6
metric.reset_state()  # the base class zeroes the variables, as Keras's does
assert float(metric.result()) == 0.0


class FocalishLoss(keras.losses.Loss):
    def __init__(self, gamma=1.0, name="focalish", **kwargs):
        super().__init__(name=name, **kwargs)
        self.gamma = gamma

    def call(self, y_true, y_pred):
        y_pred = ops.clip(y_pred, 1e-6, 1 - 1e-6)
        p_t = y_true * y_pred + (1 - y_true) * (1 - y_pred)
        return (-((1 - p_t) ** self.gamma) * ops.log(p_t)).mean(axis=-1)


model = keras.Sequential([keras.Input((6,)), layers.Dense(8, activation="relu"), layers.Dense(1, activation="sigmoid")])
model.compile(optimizer=keras.optimizers.Adam(0.02), loss=FocalishLoss(), metrics=[TruePositives(), "accuracy"])
history = model.fit(x, y, batch_size=20, epochs=15, verbose=0)
assert list(history.history) == ["accuracy", "loss", "true_positives"], list(history.history)
assert history.history["loss"][-1] < 0.5 * history.history["loss"][0], history.history["loss"]
assert history.history["accuracy"][-1] > 0.85 and history.history["true_positives"][-1] > 0.8


class ActivityPenalty(layers.Layer):
    def __init__(self, rate, **kwargs):
        super().__init__(**kwargs)
        self.rate = rate

    def call(self, inputs):
        self.add_loss(self.rate * ops.mean(inputs * inputs))
        return inputs


class SelfSupervised(keras.Model):
    """The model adds its own loss: compile(optimizer=...) alone is enough."""

    def __init__(self):
        super().__init__()
        self.encode = layers.Dense(3)
        self.decode = layers.Dense(6)
        self.penalty = ActivityPenalty(0.01)

    def call(self, inputs):
        code = self.penalty(self.encode(inputs))
        reconstruction = self.decode(code)
        self.add_loss(ops.mean((reconstruction - inputs) ** 2))
        return reconstruction


auto = SelfSupervised()
auto.compile(optimizer=keras.optimizers.Adam(0.02))
history = auto.fit(x, epochs=10, batch_size=20, verbose=0)
assert history.history["loss"][-1] < 0.75 * history.history["loss"][0], history.history["loss"]
auto(x[:4])
assert len(auto.losses) == 2, auto.losses  # the model's own and its layer's, from the last call

frozen = keras.Sequential([keras.Input((6,)), layers.Dense(1, trainable=False)])
frozen.compile(optimizer="sgd", loss="mse")
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    history = frozen.fit(x, y, epochs=2, verbose=0)
assert any("does not have any trainable weights" in str(w.message) for w in caught), [str(w.message) for w in caught]
assert abs(history.history["loss"][0] - history.history["loss"][1]) < 1e-5  # nothing was trained
try:
    plain = keras.Sequential([keras.Input((6,)), layers.Dense(1)])
    plain.compile(optimizer="sgd")
    plain.fit(x, y, verbose=0)
except ValueError as error:
    assert "No loss to compute" in str(error)
else:
    raise AssertionError("fit without any loss must fail")
print("OK")
