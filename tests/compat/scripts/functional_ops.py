"""keras.ops on symbolic tensors while a functional model is built, with only
the import changed, as keras.io's Keras 3 examples do (TabTransformer stacks
its feature embeddings with ``ops.stack``, the timeseries and VAE examples
use ``ops.expand_dims``/``ops.square``/``ops.exp`` on layer outputs): each op
is a node of the graph that trains, saves and reloads with the model and is
not one of ``model.layers``."""
import os
import tempfile

import numpy as np

import minikeras as keras
from minikeras import layers, ops

keras.utils.set_random_seed(0)
rng = np.random.default_rng(0)
n, vocabulary = 512, 10
categories = rng.integers(0, vocabulary, size=(n, 3))
numeric = rng.normal(size=(n, 4)).astype("float32")
labels = ((categories[:, 0] % 2 == 0) ^ (numeric[:, 0] > 0)).astype("float32")[:, None]

category_input = keras.Input((3,), dtype="int32", name="categories")
numeric_input = keras.Input((4,), name="numeric")
embedded = [layers.Embedding(vocabulary, 8)(category_input[:, i]) for i in range(3)]
tokens = ops.stack(embedded, axis=1)  # (None, 3, 8)
assert tuple(tokens.shape) == (None, 3, 8), tokens.shape
attended = layers.MultiHeadAttention(num_heads=2, key_dim=4)(tokens, tokens)
tokens = layers.LayerNormalization()(tokens + attended)
numeric_features = layers.Dense(8)(ops.expand_dims(numeric_input, -1))  # (None, 4, 8)
features = ops.concatenate([tokens, numeric_features], axis=1)
pooled = ops.mean(features, axis=1)
spread = ops.sqrt(ops.mean(ops.square(features - ops.expand_dims(pooled, 1)), axis=1) + 1e-6)
hidden = layers.Dense(32, activation="relu")(ops.concatenate([pooled, spread, ops.reshape(features, (-1, 56))], -1))
outputs = layers.Dense(1, activation="sigmoid")(hidden)
model = keras.Model({"categories": category_input, "numeric": numeric_input}, outputs)
assert all(isinstance(layer, layers.Layer) for layer in model.layers)
assert not any(layer.name.startswith(("stack", "expand_dims", "concatenate", "mean", "sqrt")) for layer in model.layers), \
    [layer.name for layer in model.layers]
model.summary()

model.compile(optimizer=keras.optimizers.Adam(0.01), loss="binary_crossentropy", metrics=["accuracy"])
data = {"categories": categories, "numeric": numeric}
history = model.fit(data, labels, batch_size=64, epochs=12, verbose=0)
assert history.history["loss"][-1] < 0.8 * history.history["loss"][0], history.history["loss"]
accuracy = model.evaluate(data, labels, verbose=0, return_dict=True)["accuracy"]
assert accuracy > 0.8, accuracy

path = os.path.join(tempfile.mkdtemp(), "functional_ops.keras")
model.save(path)
restored = keras.models.load_model(path)
np.testing.assert_allclose(restored.predict(data, verbose=0), model.predict(data, verbose=0), rtol=1e-5, atol=1e-6)
print("OK")
