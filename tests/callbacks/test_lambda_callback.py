"""LambdaCallback: every given function is called at its hook with Keras's arguments."""
import pytest

from minikeras.callbacks import LambdaCallback


def test_hooks_are_called_in_order_with_their_arguments(data, make_model):
    x, y = data
    events = []
    callback = LambdaCallback(
        on_train_begin=lambda logs: events.append(("train_begin", dict(logs))),
        on_epoch_begin=lambda epoch, logs: events.append(("epoch_begin", epoch)),
        on_batch_begin=lambda batch, logs: events.append(("batch_begin", batch)),
        on_batch_end=lambda batch, logs: events.append(("batch_end", batch, sorted(logs))),
        on_epoch_end=lambda epoch, logs: events.append(("epoch_end", epoch, sorted(logs))),
        on_train_end=lambda logs: events.append(("train_end", sorted(logs))),
    )
    make_model().fit(x, y, batch_size=32, epochs=2, verbose=0, callbacks=[callback])
    batch = [("batch_begin", 0), ("batch_end", 0, ["loss", "mae"]),
             ("batch_begin", 1), ("batch_end", 1, ["loss", "mae"])]
    assert events == (
        [("train_begin", {})]
        + [("epoch_begin", 0)] + batch + [("epoch_end", 0, ["loss", "mae"])]
        + [("epoch_begin", 1)] + batch + [("epoch_end", 1, ["loss", "mae"])]
        + [("train_end", ["loss", "mae"])]
    )


def test_other_hooks_by_keyword(data, make_model):
    x, y = data
    events = []
    callback = LambdaCallback(
        on_train_batch_end=lambda batch, logs: events.append(("train_batch_end", batch)),
        on_test_begin=lambda logs: events.append("test_begin"),
        on_test_batch_end=lambda batch, logs: events.append(("test_batch_end", batch)),
    )
    model = make_model()
    model.fit(x, y, batch_size=64, epochs=1, verbose=0, callbacks=[callback])
    model.evaluate(x, y, batch_size=64, verbose=0, callbacks=[callback])
    assert events == [("train_batch_end", 0), "test_begin", ("test_batch_end", 0)]


def test_unset_hooks_do_nothing(data, make_model):
    x, y = data
    make_model().fit(x, y, epochs=1, verbose=0, callbacks=[LambdaCallback()])


def test_bad_arguments():
    with pytest.raises(TypeError, match="unknown hook.*on_epoch_ending"):
        LambdaCallback(on_epoch_ending=print)
    with pytest.raises(TypeError, match="on_epoch_end must be callable"):
        LambdaCallback(on_epoch_end=3)
    with pytest.raises(TypeError, match="both on_batch_end and on_train_batch_end"):
        LambdaCallback(on_batch_end=print, on_train_batch_end=print)
