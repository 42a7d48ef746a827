"""Host synchronisations out of the training step, counted on the strict
simulated GPU (``device.stats``): a step of fit() reads nothing back from
the device unless a callback asks for the logs, and uploads each input
once."""
import numpy
import pytest

import minikeras as mk
from minikeras import layers
from minikeras.device import registry


class StepTraffic(mk.callbacks.Callback):
    """Host traffic of the device in each training step (not reading logs)."""

    def __init__(self, device):
        super().__init__()
        self.device, self.steps = device, []

    def on_train_batch_begin(self, batch, logs=None):
        self.before = self.device.stats.host_traffic()

    def on_train_batch_end(self, batch, logs=None):
        after = self.device.stats.host_traffic()
        self.steps.append({name: after[name] - self.before[name] for name in after})


class ReadsLossEvery(mk.callbacks.Callback):
    def __init__(self, period):
        super().__init__()
        self.period, self.seen = period, []

    def on_train_batch_end(self, batch, logs=None):
        if batch % self.period == 0:
            self.seen.append(logs["loss"])


def _model():
    mk.random.seed(0)
    model = mk.Sequential([layers.Input((8,)), layers.Dense(16, activation="relu"), layers.Dense(3)])
    model.compile("adam", mk.losses.SparseCategoricalCrossentropy(from_logits=True), metrics=["accuracy"])
    return model


def _data():
    rng = numpy.random.default_rng(0)
    x = rng.normal(size=(96, 8)).astype("float32")
    return x, (x[:, 0] > 0).astype("int64") + (x[:, 1] > 0)


@pytest.mark.parametrize("with_weights", [False, True])
def test_a_training_step_does_no_host_sync_and_one_upload_per_input(simulated_gpu, with_weights):
    x, y = _data()
    weights = numpy.linspace(0.5, 1.5, len(x)).astype("float32") if with_weights else None
    traffic = StepTraffic(simulated_gpu)
    model = _model()
    uploads_before = simulated_gpu.stats.uploads
    history = model.fit(x, y, sample_weight=weights, batch_size=16, epochs=2, verbose=0, callbacks=[traffic])
    inputs = 3 if with_weights else 2  # x, y (and the sample weights)
    # x is uploaded ahead of its step, while the previous one runs (models/prefetch.py): outside the step's window
    assert traffic.steps == [{"host_syncs": 0, "uploads": inputs - 1, "device_copies": 0}] * 12
    assert simulated_gpu.stats.uploads - uploads_before == inputs * 12
    assert len(history.history["loss"]) == 2 and all(numpy.isfinite(history.history["accuracy"]))


def test_logs_are_read_only_when_a_callback_looks(simulated_gpu):
    x, y = _data()
    traffic, reader = StepTraffic(simulated_gpu), ReadsLossEvery(3)
    _model().fit(x, y, batch_size=16, epochs=1, verbose=0, callbacks=[reader, traffic])
    syncs = [step["host_syncs"] for step in traffic.steps]
    assert [count > 0 for count in syncs] == [batch % 3 == 0 for batch in range(6)]
    assert len(reader.seen) == 2


def test_reading_the_logs_is_one_host_sync_for_every_pending_batch(simulated_gpu):
    """The losses, loss parts and predictions (the metrics run on the host)
    of all the batches since the last read come back in one transfer: one
    sync at the epoch's end, not one per batch and value."""
    rng = numpy.random.default_rng(1)
    x = rng.normal(size=(640, 8)).astype("float32")
    inputs = layers.Input((8,))
    hidden = layers.Dense(16, activation="relu")(inputs)
    model = mk.Model(inputs, {"a": layers.Dense(3, name="a")(hidden), "b": layers.Dense(1, name="b")(hidden)})
    model.compile("adam", {"a": mk.losses.SparseCategoricalCrossentropy(from_logits=True), "b": "mse"},
                  metrics={"a": ["accuracy"], "b": ["mae"]})
    y = {"a": (x[:, 0] > 0).astype("int64"), "b": x[:, :1] * 2}
    before = simulated_gpu.stats.host_syncs
    history = model.fit(x, y, batch_size=16, epochs=2, verbose=0, shuffle=False).history
    assert simulated_gpu.stats.host_syncs - before == 2  # 40 batches an epoch, 2 epochs
    assert set(history) == {"loss", "a_loss", "b_loss", "a_accuracy", "b_mae"}
    assert all(numpy.isfinite(history[name]).all() for name in history)


def test_an_epoch_of_thousands_of_batches_reads_back_once_per_64_batches(simulated_gpu):
    """At a user's epoch length the pending batches are read every 64
    batches (a bound on the device memory their predictions hold), each
    read one sync, and the logs still equal the CPU's."""
    rng = numpy.random.default_rng(2)
    x = rng.normal(size=(2000, 8)).astype("float32")
    y = (x[:, 0] > 0).astype("int64") + (x[:, 1] > 0)
    before = simulated_gpu.stats.host_syncs
    on_gpu = _model().fit(x, y, batch_size=1, epochs=1, verbose=0, shuffle=False).history
    assert simulated_gpu.stats.host_syncs - before == 2000 // 64 + 1  # 31 full reads, then the epoch's end
    registry._prefer_default_for_tests("cpu:0")
    try:
        on_cpu = _model().fit(x, y, batch_size=1, epochs=1, verbose=0, shuffle=False).history
    finally:
        registry._prefer_default_for_tests(None)
    for name in on_cpu:
        numpy.testing.assert_allclose(on_gpu[name], on_cpu[name], rtol=1e-5)


def test_data_already_on_the_device_is_batched_there(simulated_gpu):
    x, y = _data()
    traffic = StepTraffic(simulated_gpu)
    device_x = mk.tensor(x).data
    _model().fit(device_x, y, batch_size=16, epochs=1, verbose=0, callbacks=[traffic])
    assert [step["uploads"] for step in traffic.steps] == [1] * 6  # only y goes up; x is sliced on the device
    assert all(step["host_syncs"] == 0 for step in traffic.steps)


def test_deferred_logs_equal_the_cpu_logs(simulated_gpu):
    x, y = _data()
    on_gpu = _model().fit(x, y, batch_size=16, epochs=2, verbose=0, shuffle=False).history
    registry._prefer_default_for_tests("cpu:0")
    try:
        on_cpu = _model().fit(x, y, batch_size=16, epochs=2, verbose=0, shuffle=False).history
    finally:
        registry._prefer_default_for_tests(None)
    assert on_cpu.keys() == on_gpu.keys()
    for name in on_cpu:
        numpy.testing.assert_allclose(on_gpu[name], on_cpu[name], rtol=1e-5)


def test_progress_bar_reads_the_logs_only_when_it_redraws(simulated_gpu, capsys):
    class BeginToBegin(mk.callbacks.Callback):
        """Host syncs from one step's start to the next (so the progress
        bar's end-of-step work, which runs after user callbacks, counts)."""

        def __init__(self):
            super().__init__()
            self.marks = []

        def on_train_batch_begin(self, batch, logs=None):
            self.marks.append(simulated_gpu.stats.host_syncs)

    x, y = _data()
    traffic = BeginToBegin()
    _model().fit(x, y, batch_size=16, epochs=2, verbose=1, callbacks=[traffic])
    reading = [later > earlier for earlier, later in zip(traffic.marks, traffic.marks[1:])]
    # Not a terminal (captured): the line is drawn at epoch ends only, and
    # only then are the logs read.
    assert reading == [step == 5 for step in range(11)]
    assert "Epoch 2/2" in capsys.readouterr().out


def test_lazy_logs_compute_once_and_accept_new_entries():
    from minikeras.models.running_logs import LazyLogs

    calls = []
    logs = LazyLogs(lambda: calls.append(1) or {"loss": 1.0})
    assert calls == [] and isinstance(logs, dict)  # Keras callbacks may check
    logs["lr"] = 0.1
    assert dict(logs) == logs.copy() == {"loss": 1.0, "lr": 0.1}
    assert calls == [1]
