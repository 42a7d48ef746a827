"""Stateful RNNs as keras.io's "Working with RNNs" and the weather/
time-series guides use them, with only the import changed: the final
states of one batch are the initial states of the next, reset_states()
zeros them, the batch size is fixed by the Input."""
import os
import tempfile

import numpy as np

import minikeras as keras
from minikeras import layers

rng = np.random.default_rng(0)
paragraph1 = rng.normal(size=(20, 10, 50)).astype("float32")
paragraph2 = rng.normal(size=(20, 10, 50)).astype("float32")
paragraph3 = rng.normal(size=(20, 10, 50)).astype("float32")

lstm_layer = layers.LSTM(64, stateful=True)
output = lstm_layer(paragraph1)
output = lstm_layer(paragraph2)
output = lstm_layer(paragraph3)
assert len(lstm_layer.states) == 2 and tuple(lstm_layer.states[0].shape) == (20, 64)

# Carrying the state == running the concatenated sequence in one call.
fresh = layers.LSTM(64)
fresh.build((None, 10, 50))
fresh.set_weights(lstm_layer.get_weights())
whole = fresh(np.concatenate([paragraph1, paragraph2, paragraph3], axis=1))
np.testing.assert_allclose(np.asarray(output), np.asarray(whole), rtol=1e-4, atol=1e-5)

lstm_layer.reset_states()  # back to zeros
again = lstm_layer(paragraph1)
np.testing.assert_allclose(np.asarray(again), np.asarray(fresh(paragraph1)), rtol=1e-4, atol=1e-5)

# Reusing the state of one layer in another (the guide's "RNN State Reuse").
existing_state = lstm_layer.states
new_lstm_layer = layers.LSTM(64)
new_output = new_lstm_layer(paragraph3, initial_state=existing_state)
assert tuple(new_output.shape) == (20, 64)

# A stateful model trained with fit(shuffle=False) on consecutive windows.
batch = 8
inputs = keras.Input(batch_shape=(batch, 5, 1))
x = layers.GRU(16, stateful=True)(inputs)
outputs = layers.Dense(1)(x)
model = keras.Model(inputs, outputs)
model.compile(optimizer=keras.optimizers.Adam(0.01), loss="mse")
series = np.sin(np.arange(batch * 40 * 5) / 7.0).astype("float32")
windows = series.reshape(batch, 40, 5).transpose(1, 0, 2).reshape(-1, 5, 1)  # batch i continues batch i-1
targets = np.roll(series, -1).reshape(batch, 40, 5).transpose(1, 0, 2)[:, :, -1].reshape(-1, 1)


class ResetStates(keras.callbacks.Callback):
    def on_epoch_begin(self, epoch, logs=None):
        for layer in self.model.layers:
            if getattr(layer, "stateful", False):
                layer.reset_states()


history = model.fit(windows, targets, batch_size=batch, epochs=5, shuffle=False, verbose=0,
                    callbacks=[ResetStates()])
assert history.history["loss"][-1] < history.history["loss"][0], history.history["loss"]

try:
    model.predict(windows[:3], batch_size=3, verbose=0)
except ValueError as error:
    assert "batch size" in str(error) or "(8, 5, 1)" in str(error), error
else:
    raise AssertionError("a stateful RNN took a batch of another size")
lone = layers.SimpleRNN(4, stateful=True)
lone(np.zeros((2, 3, 1), "float32"))
try:
    lone(np.zeros((5, 3, 1), "float32"))
except ValueError as error:
    assert "Expected batch size: 2" in str(error), error
else:
    raise AssertionError("a stateful RNN took a batch of another size")

try:
    layers.SimpleRNN(4, stateful=True)(keras.Input(shape=(5, 1)))
except ValueError as error:
    assert "batch size must be static" in str(error), error
else:
    raise AssertionError("a stateful RNN was built on a dynamic batch size")

# Saved and loaded as Keras: the flag in the config, the states not in the file.
path = os.path.join(tempfile.mkdtemp(), "stateful.keras")
model.save(path)
loaded = keras.models.load_model(path)
kept = loaded.layers[1].states  # Keras: zeros made at build; minikeras: none until the first batch
assert loaded.layers[1].stateful and (kept is None or all(not np.asarray(state).any() for state in kept))
model.layers[1].reset_states()  # both start from zeros: same weights, same predictions
np.testing.assert_allclose(np.asarray(loaded.predict(windows[:8], batch_size=8, verbose=0)),
                           np.asarray(model.predict(windows[:8], batch_size=8, verbose=0)), rtol=1e-5, atol=1e-6)
print("OK")
