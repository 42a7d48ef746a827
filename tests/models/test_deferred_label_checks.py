"""Out-of-range class ids in fit() on the simulated GPU: the training step
does not read the labels back (no host sync), and fit still raises the
ValueError, when the logs are read."""
import numpy
import pytest

import minikeras as mk
from minikeras import layers
from minikeras._support import deferred_checks


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


def _embedding_model(jit_compile=False):
    mk.random.seed(0)
    model = mk.Sequential([layers.Input((5,), dtype="int32"), layers.Embedding(50, 8), layers.Flatten(),
                           layers.Dense(3)])
    model.compile("adam", mk.losses.SparseCategoricalCrossentropy(from_logits=True), jit_compile=jit_compile)
    return model


def test_an_embedding_in_a_training_step_reads_no_ids_back(simulated_gpu):
    model = _embedding_model()
    x, y = mk.tensor(numpy.arange(40).reshape(8, 5) % 50), mk.tensor(numpy.arange(8) % 3)
    model.train_step((x, y))
    before = simulated_gpu.stats.host_syncs
    model.train_step((x, y))
    assert simulated_gpu.stats.host_syncs == before
    model.get_metrics_result()
    assert not deferred_checks._pending


def test_bad_embedding_ids_in_fit_raise_the_layers_error_when_the_logs_are_read(simulated_gpu):
    x = numpy.random.default_rng(0).integers(0, 50, (64, 5))
    x[40, 2] = 77
    with pytest.raises(ValueError, match=r"^Layer 'embedding(_\d+)?' \(Embedding with input_dim=50\) received index 77: "
                                         r"ids must lie in \[0, 50\) \(found when the logs were read"):
        _embedding_model().fit(x, numpy.zeros(64, "int64"), batch_size=8, epochs=1, verbose=0)
    assert not deferred_checks._pending


def test_a_model_with_an_embedding_is_captured_whole(simulated_gpu):
    """The id check is deferred, so nothing in the step reads back: jit_compile captures it."""
    x, y = numpy.random.default_rng(0).integers(0, 50, (320, 5)), numpy.arange(320) % 3
    model = _embedding_model(jit_compile=True)
    with _no_warnings():  # no "runs eagerly" warning
        model.fit(x, y, batch_size=32, epochs=2, verbose=0, shuffle=False)
    assert simulated_gpu.stats.graph_launches > 0
    x[100, 0] = -1
    with pytest.raises(ValueError, match=r"received index -1: ids must lie in \[0, 50\)"):
        model.fit(x, y, batch_size=32, epochs=1, verbose=0, shuffle=False)


def _no_warnings():
    import warnings

    class Strict(warnings.catch_warnings):
        def __enter__(self):
            super().__enter__()
            warnings.simplefilter("error")

    return Strict()
