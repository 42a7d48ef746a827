"""utils.PyDataset / Sequence in fit, evaluate and predict; workers honoured;
a finite generator that runs out ends training with Keras's warning."""
import os
import threading
import time
import warnings

import numpy
import pytest

import minikeras as mk
from minikeras import utils


def _model():
    model = mk.Sequential([mk.layers.Input(shape=(2,)), mk.layers.Dense(1)])
    model.compile(optimizer=mk.optimizers.SGD(0.1), loss="mse")
    return model


def _data(n=64, seed=0):
    rng = numpy.random.default_rng(seed)
    x = rng.normal(size=(n, 2)).astype("float32")
    return x, (x @ numpy.array([[1.0], [-2.0]], "float32"))


class Linear(utils.PyDataset):
    """Batches of a linear problem; records which thread/process loaded each."""

    def __init__(self, batches=4, delay=0.0, **kwargs):
        super().__init__(**kwargs)
        self.x, self.y = _data(16 * batches)
        self.batches, self.delay = batches, delay
        self.loaded_by, self.events = [], []

    def __len__(self):
        return self.batches

    def __getitem__(self, index):
        time.sleep(self.delay)
        self.loaded_by.append((threading.get_ident(), os.getpid()))
        part = slice(16 * index, 16 * (index + 1))
        return self.x[part], self.y[part]

    def on_epoch_begin(self):
        self.events.append("begin")

    def on_epoch_end(self):
        self.events.append("end")


def test_keras_signature_and_defaults():
    dataset = Linear(workers=3, use_multiprocessing=False, max_queue_size=5)
    assert (dataset.workers, dataset.use_multiprocessing, dataset.max_queue_size) == (3, False, 5)
    assert dataset.num_batches == 4
    assert utils.Sequence is utils.PyDataset


@pytest.mark.parametrize("argument", [{"workers": 0}, {"workers": 1.5}, {"max_queue_size": 0}])
def test_bad_arguments(argument):
    with pytest.raises(ValueError, match="positive int"):
        Linear(**argument)


def test_fit_calls_epoch_hooks_and_learns():
    dataset = Linear()
    history = _model().fit(dataset, epochs=8, verbose=0)
    assert dataset.events == ["begin", "end"] * 8
    assert history.history["loss"][-1] < 0.5 * history.history["loss"][0]


def test_thread_workers_load_ahead_in_order():
    dataset = Linear(batches=6, delay=0.01, workers=3, max_queue_size=4)
    model = _model()
    predictions = model.predict(dataset, verbose=0)
    threads = {thread for thread, _ in dataset.loaded_by}
    assert threading.get_ident() not in threads and len(threads) > 1
    numpy.testing.assert_allclose(predictions, model.predict(dataset.x, verbose=0), rtol=1e-5)


def test_process_workers_give_the_same_batches():
    dataset = Linear(batches=4, workers=2, use_multiprocessing=True)
    model = _model()
    predictions = model.predict(dataset, verbose=0)
    numpy.testing.assert_allclose(predictions, model.predict(dataset.x, verbose=0), rtol=1e-5)
    assert dataset.loaded_by == []  # loaded in forked workers, not here


def test_a_dataset_that_does_not_call_super_init_still_works():
    x, y = _data(32)

    class Old(utils.Sequence):
        def __len__(self):
            return 2

        def __getitem__(self, index):
            return x[16 * index:16 * (index + 1)], y[16 * index:16 * (index + 1)]

    assert numpy.isfinite(_model().evaluate(Old(), verbose=0))


def test_endless_dataset_needs_steps():
    class Endless(utils.PyDataset):
        def __getitem__(self, index):
            return _data(8, seed=index)

    assert Endless().num_batches is None
    with pytest.raises(ValueError, match="steps"):
        _model().fit(Endless(), epochs=1, verbose=0)
    history = _model().fit(Endless(), epochs=2, steps_per_epoch=3, verbose=0)
    assert len(history.history["loss"]) == 2


def _finite_generator(batches):
    x, y = _data(16 * batches)
    for index in range(batches):
        yield x[16 * index:16 * (index + 1)], y[16 * index:16 * (index + 1)]


def test_generator_running_out_mid_epoch_warns_and_stops():
    with pytest.warns(UserWarning, match="ran out of data; interrupting training"):
        history = _model().fit(_finite_generator(5), epochs=4, steps_per_epoch=2, verbose=0)
    # Epochs 1 and 2 take 2 batches each, epoch 3 takes the last one and runs out.
    assert len(history.history["loss"]) == 3
    assert all(loss > 0 for loss in history.history["loss"])


def test_generator_without_steps_is_one_epoch_then_stops_without_an_empty_epoch():
    with pytest.warns(UserWarning, match="ran out of data"):
        history = _model().fit(_finite_generator(3), epochs=5, verbose=0)
    assert len(history.history["loss"]) == 1
    assert history.history["loss"][0] > 0


def test_generator_that_lasts_does_not_warn():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        history = _model().fit(_finite_generator(6), epochs=3, steps_per_epoch=2, verbose=0)
    assert len(history.history["loss"]) == 3


class DiesAtTwo(Linear):
    """A dataset whose worker process dies (as if killed for memory) loading batch 2."""

    def __getitem__(self, index):
        if index == 2:
            os._exit(1)
        return super().__getitem__(index)


def test_a_worker_process_that_dies_is_an_error_naming_the_dataset_and_the_batch():
    dataset = DiesAtTwo(batches=4, workers=2, use_multiprocessing=True, max_queue_size=1)
    with pytest.raises(mk.errors.WorkerDiedError, match=r"DiesAtTwo: a worker process died while batch 2 was "
                                                        r"being loaded \(batches in flight: \[2\]\)"):
        _model().predict(dataset, verbose=0)


class ExitsAfterOne(Linear):
    """A dataset whose worker process ends (``os._exit``) just after handing
    batch 1 back: no batch is loading when it dies, so the pool refuses the
    next request instead of failing a batch."""

    def __getitem__(self, index):
        if index == 1:
            threading.Timer(0.3, os._exit, (0,)).start()
        return super().__getitem__(index)


def test_a_worker_that_exits_between_batches_is_a_worker_died_error():
    dataset = ExitsAfterOne(batches=6, workers=1, use_multiprocessing=True, max_queue_size=2)
    slow = mk.callbacks.LambdaCallback(on_train_batch_end=lambda batch, logs: time.sleep(1.0))  # the worker dies meanwhile
    with pytest.raises(mk.errors.WorkerDiedError, match=r"ExitsAfterOne: a worker process died .*os\._exit"):
        _model().fit(dataset, verbose=0, callbacks=[slow])

