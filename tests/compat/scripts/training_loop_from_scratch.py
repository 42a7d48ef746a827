"""A training loop written by hand, as Keras's "training loop from scratch"
guide does: a tape, optimizer.apply, metric objects reset per epoch,
keras.utils.Progbar, and a GAN-style model with two optimizers in train_step."""
import contextlib
import io

import numpy as np

import minikeras as keras
from minikeras import layers, ops

keras.random.seed(7)
rng = np.random.default_rng(7)
x = rng.normal(size=(256, 8)).astype("float32")
y = np.argmax(x[:, :3], axis=1)

inputs = keras.Input(shape=(8,), name="digits")
logits = layers.Dense(3, name="predictions")(layers.Dense(32, activation="relu")(inputs))
model = keras.Model(inputs=inputs, outputs=logits)
optimizer = keras.optimizers.Adam(learning_rate=1e-2)
loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
accuracy = keras.metrics.SparseCategoricalAccuracy()
epoch_accuracy = []
stream = io.StringIO()
with contextlib.redirect_stdout(stream):
    for epoch in range(6):
        progbar = keras.utils.Progbar(target=8)
        for step in range(8):
            xb, yb = x[step * 32:(step + 1) * 32], y[step * 32:(step + 1) * 32]
            with keras.GradientTape() as tape:
                loss_value = loss_fn(yb, model(xb, training=True))
            grads = tape.gradient(loss_value, model.trainable_weights)
            optimizer.apply(grads, model.trainable_weights)
            accuracy.update_state(yb, model(xb))
            progbar.update(step + 1, values=[("loss", float(loss_value))])
        epoch_accuracy.append(float(accuracy.result()))
        accuracy.reset_state()
lines = stream.getvalue().splitlines()
assert len(lines) == 6 and all(line.startswith("8/8 ━") and " - loss: " in line for line in lines), lines
assert epoch_accuracy[-1] > 0.85 and epoch_accuracy[-1] > epoch_accuracy[0], epoch_accuracy


class GAN(keras.Model):
    """Two models, two optimizers, compile() overridden: the Keras DCGAN example's shape."""

    def __init__(self, discriminator, generator, latent_dim):
        super().__init__()
        self.discriminator = discriminator
        self.generator = generator
        self.latent_dim = latent_dim
        self.d_loss_tracker = keras.metrics.Mean(name="d_loss")
        self.g_loss_tracker = keras.metrics.Mean(name="g_loss")

    def compile(self, d_optimizer, g_optimizer, loss_fn):
        super().compile()
        self.d_optimizer, self.g_optimizer, self.loss_fn = d_optimizer, g_optimizer, loss_fn

    @property
    def metrics(self):
        return [self.d_loss_tracker, self.g_loss_tracker]

    def train_step(self, real):
        batch = real.shape[0]
        fake = self.generator(keras.random.normal((batch, self.latent_dim)))
        images = ops.concatenate([fake, real], axis=0)
        labels = ops.concatenate([ops.ones((batch, 1)), ops.zeros((batch, 1))], axis=0)
        with keras.GradientTape() as tape:
            d_loss = self.loss_fn(labels, self.discriminator(images))
        grads = tape.gradient(d_loss, self.discriminator.trainable_weights)
        self.d_optimizer.apply_gradients(zip(grads, self.discriminator.trainable_weights))
        with keras.GradientTape() as tape:
            fooled = self.discriminator(self.generator(keras.random.normal((batch, self.latent_dim))))
            g_loss = self.loss_fn(ops.zeros((batch, 1)), fooled)
        grads = tape.gradient(g_loss, self.generator.trainable_weights)
        self.g_optimizer.apply_gradients(zip(grads, self.generator.trainable_weights))
        self.d_loss_tracker.update_state(d_loss)
        self.g_loss_tracker.update_state(g_loss)
        return {m.name: m.result() for m in self.metrics}


real = rng.normal(loc=2.0, scale=0.5, size=(256, 2)).astype("float32")
discriminator = keras.Sequential([keras.Input((2,)), layers.Dense(16, activation="relu"), layers.Dense(1)])
generator = keras.Sequential([keras.Input((4,)), layers.Dense(16, activation="relu"), layers.Dense(2)])
gan = GAN(discriminator, generator, latent_dim=4)
gan.compile(keras.optimizers.Adam(2e-3), keras.optimizers.Adam(2e-3), keras.losses.BinaryCrossentropy(from_logits=True))
generator_before = generator.get_weights()[0].copy()
discriminator_before = discriminator.get_weights()[0].copy()
history = gan.fit(real, batch_size=32, epochs=4, verbose=0)
assert list(history.history) == ["d_loss", "g_loss"] and len(history.history["d_loss"]) == 4
assert not np.allclose(generator.get_weights()[0], generator_before)  # both models trained
assert not np.allclose(discriminator.get_weights()[0], discriminator_before)
# The discriminator beats chance (log 2) and the generator's loss falls as it learns to fool it.
assert history.history["d_loss"][-1] < np.log(2), history.history
assert history.history["g_loss"][-1] < history.history["g_loss"][0] - 0.03, history.history
print("OK")
