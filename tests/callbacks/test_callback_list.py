"""CallbackList (minikeras/callbacks/callback.py): hooks always get a logs dict."""
import pytest

from minikeras.callbacks import Callback, CallbackList


class Spy(Callback):
    def __init__(self):
        super().__init__()
        self.seen = []

    def on_epoch_begin(self, epoch, logs=None):
        self.seen.append(("epoch_begin", epoch, logs))

    def on_train_begin(self, logs=None):
        self.seen.append(("train_begin", logs))

    def on_test_batch_end(self, batch, logs=None):
        self.seen.append(("test_batch_end", batch, logs))


def test_missing_logs_become_empty_dicts_and_given_ones_pass_through():
    spy = Spy()
    callbacks = CallbackList([spy], model="model", verbose=0, epochs=1, steps=2)
    callbacks.on_train_begin()
    callbacks.on_epoch_begin(3)
    callbacks.on_test_batch_end(1, {"loss": 0.5})
    assert spy.seen == [("train_begin", {}), ("epoch_begin", 3, {}), ("test_batch_end", 1, {"loss": 0.5})]
    assert spy.model == "model" and spy.params == {"verbose": 0, "epochs": 1, "steps": 2}


def test_non_callbacks_are_refused():
    with pytest.raises(TypeError, match="Callback instances, received function"):
        CallbackList([lambda: None])


def test_fit_uses_a_history_the_user_passes(data, make_model):
    from minikeras.callbacks import History

    x, y = data
    mine = History()
    returned = make_model().fit(x, y, epochs=2, verbose=0, callbacks=[mine])
    assert returned is mine and len(mine.history["loss"]) == 2
