"""Custom layers and their weights, Keras 3 style: add_weight with every
argument optional, Variables with assign/assign_add/assign_sub, .value,
.numpy(), .shape, .dtype, .trainable, .path, in arithmetic and ops."""
import numpy as np

import minikeras as keras
from minikeras import layers, ops


class Linear(layers.Layer):
    def __init__(self, units=4, **kwargs):
        super().__init__(**kwargs)
        self.units = units

    def build(self, input_shape):
        self.w = self.add_weight(shape=(input_shape[-1], self.units))  # glorot_uniform, float32, trainable
        self.b = self.add_weight(shape=(self.units,), initializer="zeros", name="bias",
                                 regularizer=keras.regularizers.L2(1e-3), constraint=keras.constraints.NonNeg())
        self.calls = self.add_weight(shape=(), initializer="zeros", trainable=False, dtype="int32",
                                     name="calls")

    def call(self, inputs):
        self.calls.assign_add(1)
        return ops.matmul(inputs, self.w.value) + self.b

    def get_config(self):
        return {**super().get_config(), "units": self.units}


layer = Linear(3, name="linear")
out = layer(np.ones((2, 5), "float32"))
assert out.shape == (2, 3)
w, b, calls = layer.w, layer.b, layer.calls
assert w.shape == (5, 3) and w.dtype == np.float32 and w.trainable and w.path == "linear/variable"
assert b.path == "linear/bias" and np.all(b.numpy() == 0) and calls.dtype == np.int32 and not calls.trainable
limit = np.sqrt(6 / (5 + 3))
assert np.all(np.abs(w.numpy()) <= limit) and np.std(w.numpy()) > 0.1 * limit  # glorot_uniform by default
assert [v.path for v in layer.trainable_weights] == ["linear/variable", "linear/bias"]
assert [v.path for v in layer.non_trainable_weights] == ["linear/calls"] and int(calls.numpy()) == 1
assert len(layer.losses) == 1  # the bias regularizer

w.assign(np.full((5, 3), 0.5, "float32"))
w.assign_sub(np.full((5, 3), 0.25, "float32"))
b.assign_add([1.0, 2.0, 3.0])
assert np.allclose(layer(np.ones((1, 5), "float32")).numpy(), [[2.25, 3.25, 4.25]])
assert np.allclose((w * 2 + 1).numpy(), 1.5) and np.allclose(ops.sum(w).numpy(), 3.75)
assert int(calls.numpy()) == 2

free = keras.Variable([1.0, -2.0], name="free")
assert free.trainable and free.path == "free" and free.dtype == np.float32
other = keras.Variable(initializer="ones", shape=(2,), trainable=False)
assert np.all((free + other).numpy() == [2.0, -1.0]) and not other.trainable

# Trains inside a model; the constraint keeps the bias non-negative.
rng = np.random.default_rng(2)
x = rng.normal(size=(128, 5)).astype("float32")
y = x @ rng.normal(size=(5, 3)).astype("float32")
model = keras.Sequential([keras.Input((5,)), Linear(3)])
model.compile(optimizer=keras.optimizers.Adam(0.05), loss="mse")
history = model.fit(x, y, epochs=10, batch_size=16, verbose=0)
assert history.history["loss"][-1] < 0.2 * history.history["loss"][0], history.history["loss"]
assert np.all(model.layers[-1].b.numpy() >= 0)
assert int(model.layers[-1].calls.numpy()) in (80, 81)  # one call per step (+1 when Sequential builds)

# Round trip through get_config / from_config with custom_objects.
clone = keras.Sequential.from_config(model.get_config(), custom_objects={"Linear": Linear})
assert isinstance(clone.layers[-1], Linear) and clone.layers[-1].units == 3
print("OK")
