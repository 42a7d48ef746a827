"""fit/evaluate/predict end to end: models learn, inputs of every kind, bad input."""
import numpy
import pytest

import minikeras as mk
from minikeras import layers


def _blobs(n=600, features=10, seed=0):
    """Three Gaussian classes, not linearly trivial (XOR-like pairs of means)."""
    rng = numpy.random.default_rng(seed)
    labels = rng.integers(0, 3, n)
    centers = numpy.array([[2, 2], [-2, -2], [2, -2]], dtype="float32")
    x = rng.normal(scale=1.0, size=(n, features)).astype("float32")
    x[:, :2] += centers[labels]
    x[labels == 2, 2:4] += numpy.array([[1.5, -1.5]], dtype="float32")
    return x, labels


def test_mlp_learns_a_synthetic_task():
    x, y = _blobs()
    model = mk.Sequential([layers.Input(shape=(10,)), layers.Dense(32, activation="relu"),
                           layers.Dense(3, activation="softmax")])
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    history = model.fit(x[:500], y[:500], batch_size=32, epochs=15, verbose=0, validation_split=0.2)
    assert history.history["loss"][-1] < history.history["loss"][0]
    assert set(history.history) == {"loss", "accuracy", "val_loss", "val_accuracy"}
    result = model.evaluate(x[500:], y[500:], verbose=0, return_dict=True)
    assert result["accuracy"] >= 0.85
    predictions = model.predict(x[500:], batch_size=7)
    assert predictions.shape == (100, 3)
    numpy.testing.assert_allclose(predictions.sum(axis=1), 1.0, rtol=1e-5)


def test_cnn_learns_where_a_pattern_is():
    rng = numpy.random.default_rng(1)
    n = 384
    labels = rng.integers(0, 2, n)
    images = rng.normal(scale=0.3, size=(n, 12, 12, 1)).astype("float32")
    for i, label in enumerate(labels):  # a bright 3x3 square, top-left or bottom-right, anywhere nearby
        row, col = rng.integers(0, 3, 2) + (0 if label == 0 else 6)
        images[i, row:row + 3, col:col + 3, 0] += 2.0
    model = mk.Sequential([layers.Input(shape=(12, 12, 1)), layers.Conv2D(8, 3, activation="relu"),
                           layers.MaxPooling2D(2), layers.Flatten(), layers.Dense(2, activation="softmax")])
    model.compile(optimizer=mk.optimizers.Adam(0.01), loss="sparse_categorical_crossentropy",
                  metrics=["accuracy"])
    model.fit(images[:320], labels[:320], batch_size=32, epochs=8, verbose=0)
    _, accuracy = model.evaluate(images[320:], labels[320:], verbose=0)
    assert accuracy >= 0.9


def test_lstm_learns_a_sequence_task():
    rng = numpy.random.default_rng(2)
    x = rng.normal(size=(512, 12, 1)).astype("float32")
    y = (x[:, :6, 0].sum(axis=1) > x[:, 6:, 0].sum(axis=1)).astype("float32")  # needs memory of the first half
    model = mk.Sequential([layers.Input(shape=(12, 1)), layers.LSTM(16), layers.Dense(1, activation="sigmoid")])
    model.compile(optimizer=mk.optimizers.Adam(0.01), loss="binary_crossentropy", metrics=["accuracy"])
    model.fit(x[:448], y[:448], batch_size=32, epochs=20, verbose=0)
    _, accuracy = model.evaluate(x[448:], y[448:], verbose=0)
    assert accuracy >= 0.85


def test_functional_two_inputs_two_outputs_fit():
    rng = numpy.random.default_rng(3)
    a = rng.normal(size=(256, 4)).astype("float32")
    b = rng.normal(size=(256, 3)).astype("float32")
    target_sum = (a.sum(axis=1, keepdims=True) + b.sum(axis=1, keepdims=True)).astype("float32")
    target_class = (a[:, 0] > 0).astype("int64")
    in_a, in_b = layers.Input(shape=(4,), name="a"), layers.Input(shape=(3,), name="b")
    hidden = layers.Dense(16, activation="relu")(layers.Concatenate()([in_a, in_b]))
    regression = layers.Dense(1, name="sum")(hidden)
    classes = layers.Dense(2, activation="softmax", name="sign")(hidden)
    model = mk.Model([in_a, in_b], [regression, classes])
    model.compile(optimizer="adam", loss={"sum": "mse", "sign": "sparse_categorical_crossentropy"},
                  loss_weights={"sum": 1.0, "sign": 0.5}, metrics={"sign": ["accuracy"]})
    history = model.fit({"a": a, "b": b}, [target_sum, target_class], epochs=20, batch_size=32, verbose=0)
    assert {"loss", "sum_loss", "sign_loss", "sign_accuracy"} <= set(history.history)
    assert history.history["sum_loss"][-1] < 0.5 * history.history["sum_loss"][0]
    outputs = model.predict([a, b])
    assert [o.shape for o in outputs] == [(256, 1), (256, 2)]


def test_subclassed_model_fit_and_weights():
    class TwoLayer(mk.Model):
        def __init__(self):
            super().__init__()
            self.hidden = layers.Dense(8, activation="relu")
            self.out = layers.Dense(1)

        def call(self, inputs, training=None):
            return self.out(self.hidden(inputs))

    x = numpy.random.default_rng(4).normal(size=(64, 3)).astype("float32")
    model = TwoLayer()
    model.compile(optimizer="sgd", loss="mse")
    history = model.fit(x, x.sum(axis=1, keepdims=True), epochs=10, batch_size=16, verbose=0)
    assert history.history["loss"][-1] < history.history["loss"][0]
    assert [w.shape for w in model.get_weights()] == [(3, 8), (8,), (8, 1), (1,)]


def test_generator_and_sequence_inputs():
    x, y = _blobs(n=128)

    class Batches(mk.utils.Sequence):
        def __len__(self):
            return 4

        def __getitem__(self, index):
            return x[index * 32:(index + 1) * 32], y[index * 32:(index + 1) * 32]

    def generator():
        while True:
            for i in range(4):
                yield x[i * 32:(i + 1) * 32], y[i * 32:(i + 1) * 32]

    model = mk.Sequential([layers.Input(shape=(10,)), layers.Dense(3, activation="softmax")])
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    assert len(model.fit(Batches(), epochs=2, verbose=0).history["loss"]) == 2
    model.fit(generator(), steps_per_epoch=4, epochs=2, verbose=0)
    assert model.optimizer.iterations == 16
    with pytest.raises(ValueError, match="y must be None"):
        model.fit(Batches(), y, verbose=0)


def test_class_weight_and_sample_weight_change_the_loss():
    x, y = _blobs(n=64)
    model = mk.Sequential([layers.Input(shape=(10,)), layers.Dense(3, activation="softmax")])
    model.compile(optimizer="sgd", loss="sparse_categorical_crossentropy")
    plain = model.evaluate(x, y, verbose=0)
    weighted = model.evaluate(x, y, sample_weight=numpy.where(y == 0, 3.0, 0.0), verbose=0)
    assert weighted != pytest.approx(plain)
    history = model.fit(x, y, class_weight={0: 1.0, 1: 0.0, 2: 0.0}, epochs=1, verbose=0, shuffle=False)
    assert numpy.isfinite(history.history["loss"][0])


def test_verbose_progress_bar_and_epoch_lines(capsys):
    x, y = _blobs(n=64)
    model = mk.Sequential([layers.Input(shape=(10,)), layers.Dense(3, activation="softmax")])
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    model.fit(x, y, epochs=1, batch_size=16, verbose=1)
    out = capsys.readouterr().out
    # Keras prints "Epoch i/n" only for several epochs; stdout is not a tty here: one finished line, no "\r".
    assert "Epoch" not in out and out.startswith("4/4 ━━━━━━━━━━━━━━━━━━━━ ") and "- loss:" in out
    assert "\r" not in out and out.count("\n") == 1
    model.fit(x, y, epochs=2, batch_size=16, verbose=2)
    out = capsys.readouterr().out
    assert out.count("Epoch ") == 2 and out.count("4/4 - ") == 2 and "- accuracy: " in out
    model.fit(x, y, epochs=1, verbose=0)
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err == ""


def test_summary_lists_layers_shapes_and_counts(capsys):
    model = mk.Sequential([layers.Input(shape=(28, 28, 1)), layers.Conv2D(4, 3), layers.BatchNormalization(),
                           layers.Flatten(), layers.Dense(10)], name="tiny")
    model.summary()
    out = capsys.readouterr().out
    assert 'Model: "tiny"' in out and "(None, 26, 26, 4)" in out and "(None, 10)" in out
    assert "Total params: 27,106 (105.88 KB)" in out and "Trainable params: 27,098 (105.85 KB)" in out
    assert "Non-trainable params: 8 (32.00 B)" in out


def test_bad_input_errors():
    x, y = _blobs(n=64)
    model = mk.Sequential([layers.Input(shape=(10,)), layers.Dense(3, activation="softmax")])
    with pytest.raises(RuntimeError, match="compile"):
        model.fit(x, y, verbose=0)
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
    with pytest.raises(ValueError, match="same number of samples: x has 64, y has"):
        model.fit(x, y[:60], verbose=0)
    with pytest.raises(ValueError, match=r"expected shape \(None, 10\), received \(\d+, 11\)"):
        model.predict(numpy.ones((64, 11), dtype="float32"))
    with pytest.raises(ValueError, match="labels|range|class"):
        model.fit(x, numpy.full(64, 7), verbose=0)
    with pytest.raises(ValueError, match="Unknown loss"):
        model.compile(optimizer="adam", loss="no_such_loss")
    with pytest.raises(ValueError, match="(?i)unknown.*optimizer|optimizer.*unknown|Known"):
        model.compile(optimizer="no_such_optimizer", loss="mse")
    with pytest.raises(ValueError, match="(?i)activation"):
        layers.Dense(3, activation="no_such_activation")
    with pytest.raises(ValueError, match="(?i)initializer"):
        layers.Dense(3, kernel_initializer="no_such_initializer")
    with pytest.raises(ValueError, match="batch_size must be a positive int"):
        model.fit(x, y, batch_size=0, verbose=0)


def test_terminate_on_nan_stops_and_says_so(capsys):
    x = numpy.ones((64, 2), dtype="float32")
    y = numpy.ones((64, 1), dtype="float32")
    model = mk.Sequential([layers.Input(shape=(2,)), layers.Dense(1)])
    model.compile(optimizer=mk.optimizers.SGD(1e30), loss="mse")
    history = model.fit(x * 1e20, y, epochs=5, batch_size=8, verbose=0, callbacks=[mk.callbacks.TerminateOnNaN()])
    assert "Invalid loss, terminating training" in capsys.readouterr().out
    assert len(history.history.get("loss", [])) <= 1
    assert model.optimizer.iterations < 40


def test_loss_weights_of_a_single_output_model_as_keras_takes_them():
    rng = numpy.random.default_rng(0)
    x = rng.normal(size=(16, 3)).astype("float32")
    y = rng.normal(size=(16, 1)).astype("float32")
    losses = {}
    for name, weights in [("none", None), ("list", [2.0]), ("number", 2.0), ("dict", "by-name")]:
        mk.random.seed(0)
        model = mk.Sequential([mk.layers.Input(shape=(3,)), mk.layers.Dense(1, name="out")])
        model.compile("sgd", "mse", loss_weights={"out": 2.0} if weights == "by-name" else weights)
        losses[name] = model.evaluate(x, y, verbose=0)
    assert losses["list"] == losses["number"] == losses["dict"] == pytest.approx(2 * losses["none"], rel=1e-6)
    model = mk.Sequential([mk.layers.Input(shape=(3,)), mk.layers.Dense(1)])
    with pytest.raises(ValueError, match="loss_weights must match the number of losses: the model has 1 output"):
        model.compile("sgd", "mse", loss_weights=[1.0, 2.0])
    with pytest.raises(TypeError, match="loss_weights must be a number"):
        model.compile("sgd", "mse", loss_weights=["heavy"])
