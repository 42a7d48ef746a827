"""Customising fit as the Keras 3 guide does: train_step/test_step/predict_step
overrides, a tape, compiled_loss/compiled_metrics (tf.keras 2 era) and
compute_loss (Keras 3), apply_gradients and apply, metrics and reset_metrics."""
import numpy as np

import minikeras as keras
from minikeras import layers, ops

rng = np.random.default_rng(0)
x = rng.normal(size=(256, 8)).astype("float32")
true_w = rng.normal(size=(8, 1)).astype("float32")
y = x @ true_w + 0.1


class TapeModel(keras.Model):
    """Keras 3 guide style: own loss tracker and metric, overridden metrics."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.loss_tracker = keras.metrics.Mean(name="loss")
        self.mae_metric = keras.metrics.MeanAbsoluteError(name="mae")

    def train_step(self, data):
        x, y = data
        with keras.GradientTape() as tape:
            y_pred = self(x, training=True)
            loss = keras.losses.mean_squared_error(y, y_pred).mean()
        grads = tape.gradient(loss, self.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
        self.loss_tracker.update_state(loss)
        self.mae_metric.update_state(y, y_pred)
        return {"loss": self.loss_tracker.result(), "mae": self.mae_metric.result()}

    @property
    def metrics(self):
        return [self.loss_tracker, self.mae_metric]


inputs = keras.Input(shape=(8,))
outputs = layers.Dense(1)(inputs)
model = TapeModel(inputs, outputs)  # a Model subclass called with (inputs, outputs) is functional
assert len(model.layers) == 2 and model.count_params() == 9
model.compile(optimizer=keras.optimizers.Adam(0.05))
history = model.fit(x, y, batch_size=32, epochs=8, verbose=0)
assert list(history.history) == ["loss", "mae"], history.history
assert history.history["loss"][-1] < 0.1 * history.history["loss"][0], history.history["loss"]
model.reset_metrics()
assert model.loss_tracker.result() == 0.0


class CompiledModel(keras.Model):
    """tf.keras 2 guide style: compiled_loss, compiled_metrics, metrics loop."""

    def train_step(self, data):
        x, y = data
        with keras.GradientTape() as tape:
            y_pred = self(x, training=True)
            loss = self.compiled_loss(y, y_pred, regularization_losses=self.losses)
        gradients = tape.gradient(loss, self.trainable_variables)
        self.optimizer.apply_gradients(zip(gradients, self.trainable_variables))
        self.compiled_metrics.update_state(y, y_pred)
        return {m.name: m.result() for m in self.metrics}


inputs = keras.Input(shape=(8,))
model = CompiledModel(inputs, layers.Dense(1)(inputs))
model.compile(optimizer="adam", loss="mse", metrics=["mae"])
history = model.fit(x, y, batch_size=32, epochs=3, verbose=0)
assert list(history.history) == ["mae", "loss"], history.history
assert history.history["loss"][-1] < history.history["loss"][0]


class Keras3Model(keras.Model):
    """Keras 3 guide style: compute_loss, a metrics loop, loss.backward()."""

    def __init__(self):
        super().__init__()
        self.hidden = layers.Dense(16, activation="relu")
        self.out = layers.Dense(1)

    def call(self, inputs):
        return self.out(self.hidden(inputs))

    def train_step(self, data):
        x, y, sample_weight = keras.utils.unpack_x_y_sample_weight(data)
        y_pred = self(x, training=True)
        loss = self.compute_loss(x=x, y=y, y_pred=y_pred, sample_weight=sample_weight)
        variables = self.trainable_variables
        for variable in variables:
            variable.grad = None
        loss.backward()
        self.optimizer.apply([v.grad for v in variables], variables)
        for metric in self.metrics:
            if metric.name == "loss":
                metric.update_state(loss)
            else:
                metric.update_state(y, y_pred, sample_weight=sample_weight)
        return {m.name: m.result() for m in self.metrics}

    def test_step(self, data):
        x, y = data
        y_pred = self(x, training=False)
        loss = self.compute_loss(y=y, y_pred=y_pred)
        for metric in self.metrics:
            if metric.name == "loss":
                metric.update_state(loss)
            else:
                metric.update_state(y, y_pred)
        return {m.name: m.result() for m in self.metrics}

    def predict_step(self, data):
        x, _, _ = keras.utils.unpack_x_y_sample_weight(data)
        return ops.relu(self(x, training=False)) * 0 + 7.0


model = Keras3Model()
model.compile(optimizer=keras.optimizers.SGD(0.05), loss="mse", metrics=["mae"])
history = model.fit(x, y, batch_size=32, epochs=5, validation_data=(x, y), verbose=0)
# Keras sorts the returned dict before flattening it: "compile_metrics" (mae) comes before "loss".
assert list(history.history) == ["mae", "loss", "val_mae", "val_loss"], list(history.history)
assert history.history["loss"][-1] < 0.2 * history.history["loss"][0], history.history["loss"]
assert model.metrics_names == ["loss", "compile_metrics"], model.metrics_names
loss, mae = model.evaluate(x, y, verbose=0)
assert abs(loss - history.history["val_loss"][-1]) < 1e-4 and 0 < mae < 1
assert np.all(model.predict(x[:5], verbose=0) == 7.0)
print("OK")
