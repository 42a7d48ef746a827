"""MirroredModel behaves like the wrapped Model: fit (callbacks, History,
progress bar, validation), evaluate, predict, summary, save; worker
threads; bad arguments; recovery after running out of memory."""
import gc
import os
import threading

import numpy
import pytest

import minikeras as mk
from minikeras import config, layers
from minikeras.errors import ResourceExhaustedError
from tests.distribute.helpers import (
    assert_replicas_identical, assert_weights_close, classification_data, dense_model, logits_loss, twin,
)


def _compiled_pair(optimizer="adam", devices=None, metrics=("accuracy",)):
    single, wrapped = twin(dense_model)
    single.compile(optimizer, logits_loss(), metrics=list(metrics))
    mirrored = mk.MirroredModel(wrapped, devices=devices)
    mirrored.compile(optimizer, logits_loss(), metrics=list(metrics))
    return single, wrapped, mirrored


def test_public_names(split_cpu):
    split_cpu(2)
    assert mk.MirroredModel is mk.distribute.MirroredModel
    mirrored = mk.MirroredModel(dense_model())
    assert "cpu:0" in repr(mirrored) and "cpu:1" in repr(mirrored)


def test_default_devices_are_the_logical_cpus_without_gpus(split_cpu):
    split_cpu(3)
    mirrored = mk.MirroredModel(dense_model())
    assert [d.name for d in mirrored.devices] == ["cpu:0", "cpu:1", "cpu:2"]
    assert mirrored.replicas[0] is mirrored.model
    assert [{w.device.name for w in r.weights} for r in mirrored.replicas] == [{"cpu:0"}, {"cpu:1"}, {"cpu:2"}]


def test_fit_history_validation_and_callbacks(split_cpu):
    split_cpu(2)
    single, wrapped, mirrored = _compiled_pair()
    x, y = classification_data((8,), 40)
    seen = []
    callback = mk.callbacks.LambdaCallback(on_train_batch_end=lambda batch, logs: seen.append(batch))
    expected = single.fit(x, y, batch_size=8, epochs=2, shuffle=False, validation_split=0.25, verbose=0)
    history = mirrored.fit(x, y, batch_size=8, epochs=2, shuffle=False, validation_split=0.25, verbose=1,
                           callbacks=[callback])
    assert set(history.history) == {"loss", "accuracy", "val_loss", "val_accuracy"}
    for key in history.history:
        numpy.testing.assert_allclose(history.history[key], expected.history[key], rtol=1e-5)
    assert seen == [0, 1, 2, 3] * 2  # 30 training samples in batches of 8


def test_progress_bar_is_printed(split_cpu, capfd):
    split_cpu(2)
    _, _, mirrored = _compiled_pair()
    x, y = classification_data((8,), 16)
    mirrored.fit(x, y, batch_size=8, epochs=1, verbose=1)
    captured = capfd.readouterr()
    assert "loss" in captured.out + captured.err


def test_evaluate_and_predict_match_one_device(split_cpu):
    split_cpu(3)
    single, wrapped, mirrored = _compiled_pair()
    x, y = classification_data((8,), 23)
    numpy.testing.assert_allclose(mirrored.evaluate(x, y, batch_size=10, verbose=0),
                                  single.evaluate(x, y, batch_size=10, verbose=0), rtol=1e-6)
    got = mirrored.predict(x, batch_size=10)
    assert isinstance(got, numpy.ndarray) and got.shape == (23, 3)
    numpy.testing.assert_allclose(got, single.predict(x, batch_size=10), rtol=1e-5, atol=1e-6)
    numpy.testing.assert_allclose(mirrored.predict_on_batch(x[:2]), single.predict_on_batch(x[:2]), rtol=1e-5)
    out = mirrored(x[:5])
    assert isinstance(out, mk.Tensor) and out.device.name == "cpu:0" and out.shape == (5, 3)
    logs = mirrored.evaluate(x, y, verbose=0, return_dict=True)
    assert set(logs) == {"loss", "accuracy"}


def test_save_writes_a_plain_model(split_cpu, tmp_path):
    split_cpu(2)
    _, wrapped, mirrored = _compiled_pair(devices=["cpu:1", "cpu:0"])  # the wrapped model is not replica 0
    x, y = classification_data((8,), 20)
    mirrored.fit(x, y, batch_size=5, epochs=1, verbose=0)
    path = tmp_path / "mirrored.h5"
    mirrored.save(path)
    restored = mk.models.load_model(path)
    assert type(restored) is type(wrapped)
    assert_weights_close(restored.get_weights(), mirrored.get_weights(), rtol=0)
    assert restored.optimizer.iterations == 4
    numpy.testing.assert_allclose(restored.predict(x), mirrored.predict(x), rtol=1e-5, atol=1e-6)
    weights_path = tmp_path / "weights.h5"
    mirrored.save_weights(weights_path)
    fresh = mk.MirroredModel(dense_model(seed=5))
    fresh.load_weights(weights_path)
    assert_replicas_identical(fresh)
    assert_weights_close(fresh.get_weights(), mirrored.get_weights(), rtol=0)


def test_summary_is_the_wrapped_models(split_cpu):
    split_cpu(2)
    model = dense_model()
    lines, expected = [], []
    mk.MirroredModel(model).summary(print_fn=lines.append)
    model.summary(print_fn=expected.append)
    assert lines == expected and any("dense" in line for line in lines)


def test_learning_rate_callback_reaches_every_replica(split_cpu):
    split_cpu(2)
    single, wrapped, mirrored = _compiled_pair(optimizer=mk.optimizers.SGD(0.1))
    single.compile(mk.optimizers.SGD(0.1), logits_loss())
    x, y = classification_data((8,), 20)
    schedule = mk.callbacks.LearningRateScheduler(lambda epoch, lr: 0.1 / (epoch + 1))
    single.fit(x, y, batch_size=5, epochs=3, shuffle=False, verbose=0,
               callbacks=[mk.callbacks.LearningRateScheduler(lambda epoch, lr: 0.1 / (epoch + 1))])
    mirrored.fit(x, y, batch_size=5, epochs=3, shuffle=False, verbose=0, callbacks=[schedule])
    assert [replica.optimizer.learning_rate for replica in mirrored.replicas] == pytest.approx([0.1 / 3] * 2)
    assert_replicas_identical(mirrored)
    assert_weights_close(wrapped.get_weights(), single.get_weights())


def test_set_weights_reaches_every_replica(split_cpu):
    split_cpu(3)
    mirrored = mk.MirroredModel(dense_model())
    values = [numpy.full(w.shape, 0.5, "float32") for w in mirrored.weights]
    mirrored.set_weights(values)
    assert_replicas_identical(mirrored)
    assert numpy.array_equal(mirrored.replicas[2].get_weights()[0], values[0])


def test_one_persistent_worker_thread_per_device(split_cpu):
    split_cpu(2)
    names = []
    lock = threading.Lock()
    both = threading.Barrier(2, timeout=10)

    def record(inputs):
        thread = threading.current_thread()
        if thread.name.startswith("minikeras-replica"):  # not while Sequential infers shapes
            with lock:
                names.append((thread.name, thread.ident))
            both.wait()  # passes only if the two replicas run at the same time
        return inputs

    mk.random.seed(0)
    model = mk.Sequential([layers.Input((4,)), layers.Lambda(record), layers.Dense(2)])
    mirrored = mk.MirroredModel(model)
    x = numpy.ones((6, 4), "float32")
    mirrored.predict(x, batch_size=6)
    mirrored.predict(x, batch_size=6)
    assert sorted({name for name, _ in names}) == ["minikeras-replica-cpu:0", "minikeras-replica-cpu:1"]
    assert len({ident for _, ident in names}) == 2  # the same two threads both times
    threads = mirrored._workers.threads
    mirrored.close()
    for thread in threads:
        thread.join(timeout=5)
        assert not thread.is_alive()


def test_failure_in_one_replica_leaves_no_trace_and_training_continues(split_cpu):
    devices = split_cpu(2)
    x, y = classification_data((8,), 64)
    x = numpy.repeat(x, 32, axis=1)  # 256 features: large activations
    single, wrapped = twin(dense_model, inputs=256)
    single.compile("adam", logits_loss())
    mirrored = mk.MirroredModel(wrapped)
    mirrored.compile("adam", logits_loss())
    mirrored.fit(x[:8], y[:8], batch_size=8, epochs=1, verbose=0)  # optimizers built, slots allocated
    single.fit(x[:8], y[:8], batch_size=8, epochs=1, verbose=0)
    gc.collect()
    before = [config.get_memory_info(d)["current"] for d in devices]
    weights = [replica.get_weights() for replica in mirrored.replicas]
    config.set_memory_limit("cpu:1", before[1] + 20_000)  # room for a few samples, not 32
    with pytest.raises(ResourceExhaustedError, match="CPU:1") as caught:
        mirrored.fit(x, y, batch_size=64, epochs=1, verbose=0)
    error = caught.value
    assert error.device == "/device:CPU:1" and error.limit == before[1] + 20_000
    assert error.in_use + error.requested > error.limit
    del caught, error
    assert [config.get_memory_info(d)["current"] for d in devices] == before
    for replica, values in zip(mirrored.replicas, weights):
        assert all(numpy.array_equal(a, b) for a, b in zip(replica.get_weights(), values))
    assert [replica.optimizer.iterations for replica in mirrored.replicas] == [1, 1]
    # A smaller batch fits: training goes on, identical to one device.
    mirrored.fit(x, y, batch_size=4, epochs=1, shuffle=False, verbose=0)
    single.fit(x, y, batch_size=4, epochs=1, shuffle=False, verbose=0)
    assert_replicas_identical(mirrored)
    assert_weights_close(wrapped.get_weights(), single.get_weights())


def test_failure_before_the_optimizers_exist_unbuilds_them(split_cpu):
    devices = split_cpu(2)
    _, _, mirrored = _compiled_pair(metrics=())
    x, y = classification_data((8,), 64)
    gc.collect()  # the unused single-device twin holds reference cycles
    before = config.get_memory_info(devices[0])["current"]
    config.set_memory_limit("cpu:0", before + 2000)  # not even the Adam slots fit
    with pytest.raises(ResourceExhaustedError):
        mirrored.fit(x, y, batch_size=64, epochs=1, verbose=0)
    assert config.get_memory_info(devices[0])["current"] == before
    assert not any(replica.optimizer.built for replica in mirrored.replicas)
    config.set_memory_limit("cpu:0", None)
    mirrored.fit(x, y, batch_size=16, epochs=1, verbose=0)
    assert [replica.optimizer.iterations for replica in mirrored.replicas] == [4, 4]
    assert_replicas_identical(mirrored)


def test_bad_arguments(split_cpu):
    split_cpu(2)
    model = dense_model()
    with pytest.raises(TypeError, match="wraps a minikeras Model"):
        mk.MirroredModel(layers.Dense(3))
    with pytest.raises(ValueError, match="empty"):
        mk.MirroredModel(model, devices=[])
    with pytest.raises(ValueError, match="once"):
        mk.MirroredModel(model, devices=["cpu:0", "/device:CPU:0"])
    with pytest.raises(RuntimeError, match="cpu:7"):
        mk.MirroredModel(model, devices=["cpu:0", "cpu:7"])
    with pytest.raises(TypeError, match="sync_batch_norm"):
        mk.MirroredModel(model, sync_batch_norm="yes")
    with pytest.raises(TypeError, match="devices must be"):
        mk.MirroredModel(model, devices=3)
    with pytest.raises(TypeError, match="AllReduce"):
        mk.MirroredModel(model, all_reduce=object())
    with pytest.raises(ValueError, match="made for devices"):
        mk.MirroredModel(model, devices=["cpu:0", "cpu:1"],
                         all_reduce=mk.distribute.LocalAllReduce(config.list_logical_devices("CPU")[:1]))
    mirrored = mk.MirroredModel(model)
    with pytest.raises(ValueError, match="training=True"):
        mirrored(numpy.ones((2, 8), "float32"), training=True)
    with pytest.raises(RuntimeError, match="compile"):
        mirrored.fit(numpy.ones((2, 8), "float32"), numpy.zeros(2))
    with pytest.raises(TypeError, match="MirroredModel"):
        mk.MirroredModel(mirrored)


@pytest.mark.cpu_only(reason="BLAS thread limits of CPU replicas")
def test_blas_threads_are_limited_while_replicas_share_the_cpu(split_cpu):
    from minikeras.backend import blas_threads

    if blas_threads.get() is None:
        pytest.skip("NumPy's BLAS is not an OpenBLAS we can steer")
    split_cpu(2)
    seen = []
    model = mk.Sequential([layers.Input((4,)), layers.Lambda(lambda t: (seen.append(blas_threads.get()), t)[1]),
                           layers.Dense(2)])
    mirrored = mk.MirroredModel(model)
    mirrored.predict(numpy.ones((4, 4), "float32"))  # the library pins BLAS to one thread once, here
    pinned = blas_threads.get()
    # Give BLAS every core, so the replicas' limit (cores // replicas) has
    # something to limit on any machine (on 16 cores: 8, not the pinned 1).
    blas_threads.set_count(max(2, os.cpu_count() or 1))
    try:
        before = blas_threads.get()
        with blas_threads.at_most(1):
            assert blas_threads.get() == 1
        assert blas_threads.get() == before
        seen.clear()
        mirrored.predict(numpy.ones((4, 4), "float32"))
        assert seen[-2:] == [max(1, (os.cpu_count() or 1) // 2)] * 2
        assert blas_threads.get() == before
        mirrored.cpu_blas_threads = None
        seen.clear()
        mirrored.predict(numpy.ones((4, 4), "float32"))
        assert seen == [before, before]
    finally:
        blas_threads.set_count(pinned)
