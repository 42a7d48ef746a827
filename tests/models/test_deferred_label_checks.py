"""Out-of-range class ids in fit() on the simulated GPU: the training step
does not read the labels back (no host sync), and fit still raises the
ValueError, when the logs are read."""
import numpy
import pytest

import minikeras as mk
from minikeras import layers
from minikeras.utils import deferred_checks


def _model():
    mk.random.seed(0)
    model = mk.Sequential([layers.Input((4,)), layers.Dense(3)])
    model.compile("adam", mk.losses.SparseCategoricalCrossentropy(from_logits=True))
    return model


def test_bad_labels_in_fit_raise_when_the_logs_are_read(simulated_gpu):
    x = numpy.ones((32, 4), "float32")
    y = numpy.zeros(32, "int64")
    y[20] = 3
    with pytest.raises(ValueError, match=r"labels must be class ids in \[0, 3\).*received label 3"):
        _model().fit(x, y, batch_size=8, epochs=1, verbose=0)
    assert not deferred_checks._pending


def test_a_training_step_reads_no_labels_back(simulated_gpu):
    model = _model()
    x, y = mk.tensor(numpy.ones((8, 4), "float32")), mk.tensor(numpy.arange(8) % 3)
    model.train_step((x, y))
    before = simulated_gpu.stats.host_syncs
    model.train_step((x, y))
    assert simulated_gpu.stats.host_syncs == before
    model.get_metrics_result()  # the logs' read runs the deferred check (and reads the loss)
    assert not deferred_checks._pending


def test_checks_run_by_themselves_when_too_many_pile_up(simulated_gpu):
    with simulated_gpu.activate():
        labels = simulated_gpu.asarray(numpy.array([0, 5]))
    with pytest.raises(ValueError, match=r"\[0, 2\).*received label 5"):
        for _ in range(deferred_checks.MAX_PENDING):
            deferred_checks.defer_label_range("loss", simulated_gpu, labels, 2)
    assert not deferred_checks._pending


def test_the_cpu_checks_at_once():
    model = _model()
    x, y = mk.tensor(numpy.ones((8, 4), "float32"), device="cpu"), mk.tensor(numpy.full(8, 7), device="cpu")
    with mk.device("cpu"), pytest.raises(ValueError, match=r"\[0, 3\)"):
        model.train_step((x, y))


def _ctc_model():
    mk.random.seed(0)
    model = mk.Sequential([layers.Input((5, 4)), layers.Dense(4)])
    model.compile("adam", mk.losses.CTC())
    return model


def test_ctc_labels_are_checked_when_the_logs_are_read_not_in_the_step(simulated_gpu):
    model = _ctc_model()
    x = mk.tensor(numpy.ones((2, 5, 4), "float32"))
    model.train_step((x, mk.tensor(numpy.array([[1, 2], [3, 0]]))))
    before = simulated_gpu.stats.host_syncs
    model.train_step((x, mk.tensor(numpy.array([[1, 4], [3, 0]]))))  # 4 is no class of 4: CuPy would wrap it
    assert simulated_gpu.stats.host_syncs == before
    with pytest.raises(ValueError, match=r"^ctc_loss: labels must be class ids in \[0, 4\).*received label 4 "
                                         r"\(found when the logs were read"):
        model.get_metrics_result()
    assert not deferred_checks._pending
