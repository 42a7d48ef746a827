"""Batches uploaded one ahead on a GPU (models/prefetch.py,
device/batch_staging.py), on the strict simulated GPU, whose race detector
and pinned-memory model check every copy: the same results as the plain
upload, buffers reused, errors where the plain loop raises them."""
import numpy
import pytest

import minikeras as mk
from minikeras import layers
from minikeras.device import batch_staging
from minikeras.models import prefetch
from minikeras.testing import sim_cupy
from minikeras.testing.sim_cupy import simulation
from minikeras.testing.sim_cupy.simulation import RaceError


@pytest.fixture
def plain_and_prefetched(monkeypatch):
    """``run(make_model, *args)`` -> its results without and with prefetching."""
    def run(train, *args):
        results = []
        for enabled in (False, True):
            monkeypatch.setattr(prefetch, "enabled", enabled)
            mk.random.seed(0)
            # The order the simulated atomics (scatter-adds: Embedding's gradient) land in, drawn anew
            monkeypatch.setattr(sim_cupy, "_ATOMIC_ORDER", numpy.random.default_rng(0x5CA77E2))
            results.append(train(*args))
        return results

    return run


def _mlp(features=8, dtype=None):
    model = mk.Sequential([layers.Input((features,), dtype=dtype), layers.Dense(16, activation="relu", dtype=dtype),
                           layers.Dense(3, dtype=dtype)])
    model.compile("adam", mk.losses.SparseCategoricalCrossentropy(from_logits=True), metrics=["accuracy"])
    return model


def _data(rows, features=8, dtype="float32"):
    rng = numpy.random.default_rng(0)
    x = rng.normal(size=(rows, features)).astype(dtype)
    return x, ((x[:, 0] > 0).astype("int64") + (x[:, 1] > 0))


def _weights(model):
    return [weight.numpy() for weight in model.weights]


def _same(first, second):
    assert len(first) == len(second)
    for a, b in zip(first, second):
        assert a.dtype == b.dtype
        numpy.testing.assert_array_equal(a, b)


def _fit_evaluate_predict(device, x, y, batch_size):
    model = _mlp(x.shape[1])
    uploads = device.stats.uploads
    history = model.fit(x, y, batch_size=batch_size, epochs=1, verbose=0, shuffle=True,
                        validation_data=(x[:100], y[:100]))
    evaluated = model.evaluate(x[:400], y[:400], batch_size=batch_size, verbose=0)
    predicted = model.predict(x[:401], batch_size=batch_size, verbose=0)
    return history.history, _weights(model), evaluated, predicted, device.stats.uploads - uploads


def test_a_real_length_epoch_is_bit_identical_with_and_without_prefetch(simulated_gpu, plain_and_prefetched):
    x, y = _data(4002)  # 1,001 shuffled training batches (an MNIST epoch at batch 60), the last one of 2 rows
    plain, prefetched = plain_and_prefetched(_fit_evaluate_predict, simulated_gpu, x, y, 4)
    assert plain[0] == prefetched[0]  # every loss and metric of fit, validation included
    _same(plain[1], prefetched[1])
    assert plain[2] == prefetched[2]
    _same([plain[3]], [prefetched[3]])
    # Fit's 1,001 + 25 validation steps and evaluate's 100 upload x and y, predict's 101 x: once each.
    assert plain[4] == prefetched[4] == 2 * (1001 + 25 + 100) + 101


def test_inputs_are_uploaded_as_the_models_own_conversion_makes_them(simulated_gpu, plain_and_prefetched):
    """float64 data for a float32 model (cast on the host, as Layer._convert_input does), a float64 model,
    and integer ids for an Embedding: the same step either way."""
    def train(x, y, dtype, embed):
        if embed:
            model = mk.Sequential([layers.Input((6,), dtype="int64"), layers.Embedding(20, 4), layers.Flatten(),
                                   layers.Dense(3)])
            model.compile("sgd", mk.losses.SparseCategoricalCrossentropy(from_logits=True))
        else:
            model = _mlp(x.shape[1], dtype=dtype)
        model.fit(x, y, batch_size=16, epochs=1, verbose=0, shuffle=False)
        return _weights(model) + [model.predict(x, verbose=0)]

    x, y = _data(100, dtype="float64")
    for dtype in ("float32", "float64"):
        plain, prefetched = plain_and_prefetched(train, x, y, dtype, False)
        _same(plain, prefetched)
    ids = numpy.random.default_rng(1).integers(0, 20, size=(100, 6))
    _same(*plain_and_prefetched(train, ids, y, None, True))


def test_the_pinned_buffers_are_reused_across_the_epochs(simulated_gpu):
    x, y = _data(1000)
    inputs = layers.Input((8,)), layers.Input((8,))
    model = mk.Model(list(inputs), layers.Dense(3)(layers.Concatenate()(list(inputs))))
    model.compile("adam", mk.losses.SparseCategoricalCrossentropy(from_logits=True))
    model.fit([x, x], y, batch_size=64, epochs=1, verbose=0)
    allocated = simulation.pinned_allocations()
    model.fit([x, x], y, batch_size=64, epochs=3, verbose=0)  # 16 batches an epoch, the last one of 40 rows
    model.evaluate([x, x], y, batch_size=64, verbose=0)
    assert simulation.pinned_allocations() == allocated
    # 2 slots x 2 inputs, back in CuPy's pinned pool between runs
    assert simulated_gpu.xp.get_default_pinned_memory_pool().n_free_blocks() >= 4


def test_every_batch_is_staged_in_one_of_two_slots(simulated_gpu, monkeypatch):
    staged = []
    original = batch_staging.BatchStaging.stage

    def stage(self, arrays):
        staged.append((self._turn, [array.shape for array, _ in arrays]))
        return original(self, arrays)

    monkeypatch.setattr(batch_staging.BatchStaging, "stage", stage)
    x, y = _data(630)
    before = simulation.pinned_allocations()
    _mlp().fit(x, y, batch_size=32, epochs=2, verbose=0)
    epoch = [(step % 2, [(32, 8)]) for step in range(19)] + [(1, [(22, 8)])]
    assert staged == epoch * 2
    assert simulation.pinned_allocations() - before <= 2  # none at all when CuPy's pinned pool has them


def test_shapes_changing_between_batches(simulated_gpu, plain_and_prefetched):
    """Sequences of another length and batches of another size in each batch; a
    larger batch grows its slot's buffer."""
    def batches():
        rng = numpy.random.default_rng(3)
        for size, length in [(4, 5), (7, 9), (2, 3), (7, 12), (1, 2), (5, 12)] * 3:
            yield rng.normal(size=(size, length, 4)).astype("float32"), rng.integers(0, 3, size=size)

    def train():
        model = mk.Sequential([layers.Input((None, 4)), layers.Dense(8, activation="relu"),
                               layers.GlobalAveragePooling1D(), layers.Dense(3)])
        model.compile("adam", mk.losses.SparseCategoricalCrossentropy(from_logits=True))
        model.fit(batches(), epochs=1, verbose=0)
        return _weights(model)

    _same(*plain_and_prefetched(train))


class _Broken(Exception):
    pass


def _failing_source(good_batches):
    x, y = _data(16 * good_batches)
    for start in range(0, len(x), 16):
        yield x[start:start + 16], y[start:start + 16]
    raise _Broken("the data source failed")


def test_an_error_of_the_data_source_is_raised_after_the_steps_before_it(simulated_gpu, plain_and_prefetched):
    def train():
        model = _mlp()
        with pytest.raises(_Broken, match="the data source failed"):
            model.fit(_failing_source(3), epochs=1, verbose=0)
        return [numpy.array(int(model.optimizer.iterations))] + _weights(model)

    plain, prefetched = plain_and_prefetched(train)
    assert int(prefetched[0]) == 3  # the three batches read before the error were trained on
    _same(plain, prefetched)


def test_the_librarys_own_error_for_a_bad_batch_comes_through(simulated_gpu):
    def source():
        x, y = _data(32)
        yield x[:16], y[:16]
        yield x[:0], y[:0]

    model = _mlp()
    with pytest.raises(ValueError, match="Batch 1 of the generator holds no samples"):
        model.fit(source(), epochs=1, verbose=0)
    assert int(model.optimizer.iterations) == 1


def test_the_cpu_path_is_untouched(plain_and_prefetched):
    model = _mlp()
    source = iter([])
    with mk.device("cpu"):
        assert prefetch.batches(model, source) is source


def test_the_race_detector_catches_a_step_that_does_not_wait_for_the_copy(simulated_gpu, monkeypatch):
    def arrays_without_waiting(self):
        return self._arrays

    monkeypatch.setattr(batch_staging.Staged, "arrays", arrays_without_waiting)
    x, y = _data(64)
    with pytest.raises(RaceError, match="set()"):
        _mlp().fit(x, y, batch_size=16, epochs=1, verbose=0)


def test_the_race_detector_catches_a_staging_buffer_overwritten_under_its_copy(simulated_gpu, monkeypatch):
    monkeypatch.setattr(batch_staging, "SLOTS", 1)  # batch k+1 written into the buffer batch k's copy still reads
    monkeypatch.setattr(batch_staging.BatchStaging, "close", lambda self: None)

    class NoWait:
        def synchronize(self):
            pass

    original = batch_staging.BatchStaging.stage

    def stage_without_waiting(self, arrays):
        self._last_copy = [None if event is None else NoWait() for event in self._last_copy]
        return original(self, arrays)

    monkeypatch.setattr(batch_staging.BatchStaging, "stage", stage_without_waiting)
    x, y = _data(64)
    with pytest.raises(RaceError, match="the host wrote pinned memory"):
        _mlp().fit(x, y, batch_size=16, epochs=1, verbose=0)


def test_the_race_detector_catches_a_copy_into_blocks_the_step_may_still_read(simulated_gpu, monkeypatch):
    monkeypatch.setattr(batch_staging.BatchStaging, "_follow_device", lambda self: None)
    x, y = _data(64)
    with pytest.raises(RaceError, match="set()"):
        _mlp().fit(x, y, batch_size=16, epochs=2, verbose=0)


class _StopAfterFirstBatch(mk.callbacks.Callback):
    def on_train_batch_end(self, batch, logs=None):
        self.model.stop_training = True


def test_a_batch_staged_and_not_used_is_waited_for(simulated_gpu, monkeypatch, plain_and_prefetched):
    """stop_training after the first step: batch 2 was staged; the device's stream waits for its copy
    before its blocks serve the next run (without that wait: a race)."""
    x, y = _data(64)

    def train():
        model = _mlp()
        model.fit(x, y, batch_size=16, epochs=1, verbose=0, callbacks=[_StopAfterFirstBatch()])
        model.fit(x, y, batch_size=16, epochs=1, verbose=0)
        return [numpy.array(int(model.optimizer.iterations))] + _weights(model)

    plain, prefetched = plain_and_prefetched(train)
    _same(plain, prefetched)
    assert int(prefetched[0]) == 5
    monkeypatch.setattr(batch_staging.Staged, "discard", lambda self: None)
    with pytest.raises(RaceError, match="set()"):
        train()
