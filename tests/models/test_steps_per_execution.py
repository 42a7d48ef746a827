"""``compile(steps_per_execution=N)``: N steps per execution, batch-level
callbacks once per N steps (told the first step and ``first + N - 1``, as
Keras 3's EpochIterator yields them), the same training as N=1."""
import numpy
import pytest

import minikeras as mk
from minikeras import layers


class Steps(mk.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.seen = []

    def on_train_batch_begin(self, batch, logs=None):
        self.seen.append(("train_begin", batch))

    def on_train_batch_end(self, batch, logs=None):
        self.seen.append(("train_end", batch, float(logs["loss"])))

    def on_test_batch_begin(self, batch, logs=None):
        self.seen.append(("test_begin", batch))

    def on_test_batch_end(self, batch, logs=None):
        self.seen.append(("test_end", batch))

    def on_predict_batch_end(self, batch, logs=None):
        self.seen.append(("predict_end", batch, logs["outputs"].shape))


def _data():
    rng = numpy.random.default_rng(0)
    return rng.normal(size=(80, 5)).astype("float32"), rng.normal(size=(80, 2)).astype("float32")


def _trained(steps_per_execution, callback=None, verbose=0):
    mk.random.seed(3)
    model = mk.Sequential([layers.Input((5,)), layers.Dense(4, activation="relu"), layers.Dense(2)])
    model.compile(mk.optimizers.Adam(0.01), "mse", steps_per_execution=steps_per_execution)
    x, y = _data()
    history = model.fit(x, y, batch_size=8, epochs=2, shuffle=False, verbose=verbose,
                        callbacks=[callback] if callback else None)
    return model, history


def test_callbacks_run_once_per_execution_with_keras_step_numbers():
    callback = Steps()
    _trained(4, callback)  # 10 batches an epoch: groups of 4, 4 and 2
    first_epoch = callback.seen[:6]
    assert [entry[:2] for entry in first_epoch] == [("train_begin", 0), ("train_end", 3), ("train_begin", 4),
                                                    ("train_end", 7), ("train_begin", 8), ("train_end", 11)]
    assert len(callback.seen) == 12


def test_training_is_the_same_as_one_step_per_execution():
    grouped, grouped_history = _trained(4)
    single, single_history = _trained(1)
    for a, b in zip(grouped.get_weights(), single.get_weights()):
        numpy.testing.assert_array_equal(a, b)
    assert grouped_history.history == single_history.history
    assert grouped.steps_per_execution == 4 and single.steps_per_execution == 1


def test_the_progress_bar_takes_a_short_last_execution(capsys):
    _trained(3, verbose=1)  # 10 batches: the last group holds 1 batch, told step 11
    out = capsys.readouterr().out
    assert "10/10" in out


def test_evaluate_and_predict_group_their_batches():
    model, _ = _trained(1)
    x, y = _data()
    expected_loss = model.evaluate(x, y, batch_size=8, verbose=0)
    expected_outputs = model.predict(x, batch_size=8, verbose=0)
    model.steps_per_execution = 3
    callback = Steps()
    assert model.evaluate(x, y, batch_size=8, verbose=0, callbacks=[callback]) == pytest.approx(expected_loss)
    assert [entry for entry in callback.seen if entry[0] == "test_end"] == [("test_end", 2), ("test_end", 5),
                                                                           ("test_end", 8), ("test_end", 11)]
    callback.seen.clear()
    numpy.testing.assert_array_equal(model.predict(x, batch_size=8, verbose=0, callbacks=[callback]),
                                     expected_outputs)
    assert callback.seen == [("predict_end", 2, (24, 2)), ("predict_end", 5, (24, 2)), ("predict_end", 8, (24, 2)),
                             ("predict_end", 11, (8, 2))]


def test_the_setting_is_saved_and_restored(tmp_path):
    model, _ = _trained(5)
    model.save(tmp_path / "m.keras")
    restored = mk.models.load_model(tmp_path / "m.keras")
    assert restored.steps_per_execution == 5


@pytest.mark.parametrize("bad", [0, -2, 1.5, "4"])
def test_bad_values_are_refused(bad):
    model = mk.Sequential([layers.Input((5,)), layers.Dense(2)])
    with pytest.raises((TypeError, ValueError), match="steps_per_execution"):
        model.compile("adam", "mse", steps_per_execution=bad)


def test_a_steps_per_execution_past_the_largest_index_is_refused_at_compile():
    model = mk.Sequential([layers.Input((5,)), layers.Dense(2)])
    with pytest.raises(ValueError, match=r"compile: steps_per_execution must be <= 9223372036854775807, received "
                                         r"9223372036854775808"):
        model.compile("sgd", "mse", steps_per_execution=2**63)
    model.compile("sgd", "mse", steps_per_execution=2**63 - 1)  # the largest: the whole epoch is one execution
    x, y = _data()
    history = model.fit(x, y, batch_size=8, epochs=2, verbose=0)
    assert len(history.history["loss"]) == 2 and model.optimizer.iterations == 20
