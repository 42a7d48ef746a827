"""keras.io "Learning to tokenize in Vision Transformers" (Token Learner) and
"Compact Convolutional Transformers", with only the import changed: keras.ops
called on symbolic tensors while the functional model is built (``ops.mean``
over attention maps, ``x[:, None]``, ``ops.softmax`` and ``ops.matmul`` for
sequence pooling) and a position embedding computed eagerly and added as a
concrete tensor. Keras 3 records each op as a graph node that trains, saves
and reloads with the model and is not one of ``model.layers``."""
import os
import tempfile

import numpy as np

import minikeras as keras
from minikeras import layers, ops

keras.utils.set_random_seed(0)
rng = np.random.default_rng(0)
# 16x16 images; the class is the bright quadrant.
y_train = rng.integers(0, 4, 384)
x_train = (rng.random((384, 16, 16, 3)) * 0.2).astype("float32")
for index, label in enumerate(y_train):
    row, col = divmod(int(label), 2)
    x_train[index, row * 8:(row + 1) * 8, col * 8:(col + 1) * 8] += 0.8

num_tokens, dim = 4, 16
inputs = keras.Input((16, 16, 3))
patches = layers.Conv2D(dim, 4, strides=4)(inputs)  # a 4x4 grid of patch embeddings
tokens = layers.Reshape((16, dim))(patches)
positions = layers.Embedding(16, dim)(ops.arange(16))  # called eagerly: a constant of the graph
tokens = tokens + positions
x1 = layers.LayerNormalization(epsilon=1e-6)(tokens)
x2 = layers.MultiHeadAttention(num_heads=2, key_dim=8)(x1, x1) + tokens

# Token Learner: one attention map per learned token over the 4x4 grid.
grid = layers.Reshape((4, 4, dim))(layers.LayerNormalization(epsilon=1e-6)(x2))
maps = layers.Conv2D(num_tokens, 3, padding="same", activation="sigmoid")(grid)
maps = ops.transpose(ops.reshape(maps, (-1, 16, num_tokens)), (0, 2, 1))
learned = ops.mean(ops.expand_dims(maps, -1) * x2[:, None], axis=2)

# CCT's sequence pooling.
weights = ops.softmax(layers.Dense(1)(learned), axis=1)
pooled = ops.squeeze(ops.matmul(ops.transpose(weights, (0, 2, 1)), learned), -2)
outputs = layers.Dense(4)(pooled)
model = keras.Model(inputs, outputs)
assert learned.shape == (None, num_tokens, dim) and pooled.shape == (None, dim), (learned.shape, pooled.shape)
assert [type(layer).__name__ for layer in model.layers] == [
    "InputLayer", "Conv2D", "Reshape", "LayerNormalization", "MultiHeadAttention", "LayerNormalization",
    "Reshape", "Conv2D", "Dense", "Dense"], [type(layer).__name__ for layer in model.layers]

model.compile(optimizer=keras.optimizers.Adam(1e-2),
              loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True), metrics=["accuracy"])
history = model.fit(x_train, y_train, batch_size=32, epochs=12, verbose=0)
accuracy = history.history["accuracy"][-1]
print("loss", history.history["loss"][0], "->", history.history["loss"][-1], "accuracy", accuracy)
assert accuracy > 0.7, accuracy

with tempfile.TemporaryDirectory() as folder:
    path = os.path.join(folder, "token_learner.keras")
    model.save(path)
    restored = keras.models.load_model(path)
np.testing.assert_allclose(restored.predict(x_train[:8], verbose=0), model.predict(x_train[:8], verbose=0),
                           rtol=1e-5, atol=1e-5)
print("OK")
