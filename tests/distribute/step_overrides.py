"""Models that override the training step as Keras 3 users do, and one way to
train each (shared by test_one_step.py and the workers of mpi_overrides_worker.py).

Each case trains the same model from the same weights on the same batches,
through ``train(case, runner)``: on one device, under MirroredModel, under
the multi-worker model, with ``jit_compile`` or ``steps_per_execution``.
Every runner must give the same numbers (weights, History, metric values,
steps run).
"""
import numpy

import minikeras as mk
from minikeras import layers

BATCH = 12  # divisible by 2, 3 and 4 replicas: every replica the same rows
COUNT = 48
EPOCHS = 2

# Every train_step call of the GAN, as (id of the model that ran it, rows it got).
GAN_CALLS = []


class ScaledLoss(mk.Model):
    """A functional model whose ``compute_loss`` multiplies the loss by 10
    (the issue's example: loss 90, kernel 1.6 after one SGD step)."""

    def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, training=True):
        return 10.0 * super().compute_loss(x, y, y_pred, sample_weight, training=training)


class PositivePredictions(mk.metrics.Metric):
    """A Keras-style metric with state in ``add_variable`` (aggregation "sum")."""

    def __init__(self, name="positives", **kwargs):
        super().__init__(name=name, **kwargs)
        self.count = self.add_variable(shape=(), initializer="zeros", name="count")

    def update_state(self, y_true, y_pred, sample_weight=None):
        y_pred = mk.ops.convert_to_numpy(y_pred)
        self.count.assign_add(numpy.float32((y_pred > 0).sum()))

    def result(self):
        return float(self.count.numpy())


class GAN(mk.Model):
    """Keras's DCGAN example, shrunk: a ``compile`` with two optimizers and a
    loss function, a ``train_step`` with two tapes, two Mean trackers. The
    noise comes with the data (x), so that every runner draws the same."""

    def __init__(self, discriminator, generator, **kwargs):
        super().__init__(**kwargs)
        self.discriminator = discriminator
        self.generator = generator
        self.d_loss_tracker = mk.metrics.Mean(name="d_loss")
        self.g_loss_tracker = mk.metrics.Mean(name="g_loss")

    @property
    def metrics(self):
        return [self.d_loss_tracker, self.g_loss_tracker]

    def compile(self, d_optimizer, g_optimizer, loss_fn):
        super().compile()
        self.d_optimizer = d_optimizer
        self.g_optimizer = g_optimizer
        self.loss_fn = loss_fn

    def call(self, noise):
        return self.discriminator(self.generator(noise))

    def train_step(self, data):
        noise, real = data
        GAN_CALLS.append((id(self), int(noise.shape[0])))
        rows = noise.shape[0]
        fake = self.generator(noise)
        combined = mk.ops.concatenate([fake, mk.ops.convert_to_tensor(real)], axis=0)
        labels = numpy.concatenate([numpy.ones((rows, 1)), numpy.zeros((rows, 1))]).astype("float32")
        with mk.GradientTape() as tape:
            d_loss = self.loss_fn(labels, self.discriminator(mk.ops.stop_gradient(combined), training=True))
        grads = tape.gradient(d_loss, self.discriminator.trainable_weights)
        self.d_optimizer.apply_gradients(zip(grads, self.discriminator.trainable_weights))
        with mk.GradientTape() as tape:
            g_loss = self.loss_fn(numpy.zeros((rows, 1), "float32"),
                                  self.discriminator(self.generator(noise, training=True)))
        grads = tape.gradient(g_loss, self.generator.trainable_weights)
        self.g_optimizer.apply_gradients(zip(grads, self.generator.trainable_weights))
        self.d_loss_tracker.update_state(d_loss)
        self.g_loss_tracker.update_state(g_loss)
        return {"d_loss": self.d_loss_tracker.result(), "g_loss": self.g_loss_tracker.result()}


def _data(features, seed=0):
    rng = numpy.random.default_rng(seed)
    x = rng.normal(size=(COUNT, features)).astype("float32")
    y = (x[:, :1] * 0.7 - x[:, 1:2] * 0.3 + 0.1 * rng.normal(size=(COUNT, 1))).astype("float32")
    return x, y


def build(case, seed=0):
    """``(model, compile arguments, x, y)`` for ``case``, initial weights from ``seed``."""
    mk.random.seed(seed)
    if case == "gan":
        generator = mk.Sequential([layers.Input((4,)), layers.Dense(8, activation="relu"), layers.Dense(3)],
                                  name="generator")
        discriminator = mk.Sequential([layers.Input((3,)), layers.Dense(8, activation="relu"), layers.Dense(1)],
                                      name="discriminator")
        model = GAN(discriminator, generator)
        model(numpy.zeros((1, 4), "float32"))
        compile_args = dict(d_optimizer=mk.optimizers.Adam(0.01), g_optimizer=mk.optimizers.SGD(0.05, momentum=0.9),
                            loss_fn=mk.losses.BinaryCrossentropy(from_logits=True))
        x, _ = _data(4)
        real = numpy.random.default_rng(1).normal(1.0, 0.5, size=(COUNT, 3)).astype("float32")
        return model, compile_args, x, real
    inputs = layers.Input((4,))
    if case == "scaled_loss":
        outputs = layers.Dense(1, use_bias=False)(inputs)
        model = ScaledLoss(inputs, outputs)
        compile_args = dict(optimizer=mk.optimizers.SGD(0.01), loss="mse")
    elif case == "metric":
        outputs = layers.Dense(1)(layers.Dense(6, activation="relu")(inputs))
        model = mk.Model(inputs, outputs)
        compile_args = dict(optimizer=mk.optimizers.Adam(0.01), loss="mse",
                            metrics=["mae", PositivePredictions()])
    elif case == "add_loss":
        hidden = layers.Dense(6, activation="relu", kernel_regularizer="l2", activity_regularizer="l1")(inputs)
        model = mk.Model(inputs, layers.Dense(1)(hidden))
        compile_args = dict(optimizer=mk.optimizers.SGD(0.05, momentum=0.9), loss="mse")
    elif case == "batch_norm":  # synchronized statistics: the global batch's, as on one device
        hidden = layers.BatchNormalization(momentum=0.8, synchronized=True)(layers.Dense(6, use_bias=False)(inputs))
        model = mk.Model(inputs, layers.Dense(1)(layers.Activation("relu")(hidden)))
        compile_args = dict(optimizer=mk.optimizers.Adam(0.01), loss="mse")
    elif case == "constraints":
        hidden = layers.Dense(6, activation="relu", kernel_constraint=mk.constraints.NonNeg(),
                              bias_constraint=mk.constraints.MaxNorm(0.05, axis=0))(inputs)
        model = mk.Model(inputs, layers.Dense(1, kernel_constraint=mk.constraints.UnitNorm(axis=0))(hidden))
        compile_args = dict(optimizer=mk.optimizers.SGD(0.1, momentum=0.5), loss="mse")
    elif case == "dropout":  # random masks: the same stream on one device whatever the grouping
        hidden = layers.Dropout(0.3, seed=5)(layers.Dense(8, activation="relu")(inputs))
        model = mk.Model(inputs, layers.Dense(1)(hidden))
        compile_args = dict(optimizer=mk.optimizers.Adam(0.01), loss="mse")
    else:
        raise ValueError(f"unknown case {case!r}")
    x, y = _data(4)
    return model, compile_args, x, y


CASES = ("gan", "scaled_loss", "metric", "add_loss", "batch_norm", "constraints")


def train(case, wrap=None, compile_extra=None, seed=0):
    """Train ``case`` for EPOCHS epochs of BATCH rows, without shuffling.

    Args:
        wrap: ``wrap(model) -> trainer`` (MirroredModel, the multi-worker
            model), or None to train the model itself.
        compile_extra: more compile arguments (``jit_compile``,
            ``steps_per_execution``; not for the GAN's own compile).

    Returns:
        ``{"weights", "history", "evaluate", "steps", "calls"}``.
    """
    model, compile_args, x, y = build(case, seed)
    trainer = model if wrap is None else wrap(model)
    trainer.compile(**compile_args, **(compile_extra or {}))
    del GAN_CALLS[:]
    history = trainer.fit(x, y, batch_size=BATCH, epochs=EPOCHS, shuffle=False, verbose=0)
    calls = list(GAN_CALLS)
    evaluation = None if case == "gan" else trainer.evaluate(x, y, batch_size=BATCH, verbose=0, return_dict=True)
    optimizer = model.optimizer if case != "gan" else model.d_optimizer
    return {"weights": model.get_weights(), "history": history.history, "evaluate": evaluation,
            "steps": int(optimizer.iterations), "calls": calls}


def assert_same_training(got, expected, rtol=2e-5):
    """Weights, History, evaluation and steps as one device's, within float32 rounding."""
    assert got["steps"] == expected["steps"]
    assert len(got["weights"]) == len(expected["weights"])
    for mine, theirs in zip(got["weights"], expected["weights"]):
        scale = float(numpy.abs(theirs).max()) if theirs.size else 0.0
        numpy.testing.assert_allclose(mine, theirs, rtol=rtol, atol=max(rtol * scale, 1e-7))
    assert sorted(got["history"]) == sorted(expected["history"])
    for key, values in expected["history"].items():
        numpy.testing.assert_allclose(got["history"][key], values, rtol=rtol, atol=1e-6, err_msg=key)
    if expected["evaluate"] is not None:
        assert sorted(got["evaluate"]) == sorted(expected["evaluate"])
        for key, value in expected["evaluate"].items():
            numpy.testing.assert_allclose(got["evaluate"][key], value, rtol=rtol, atol=1e-6, err_msg=key)
