"""MultiWorkerMirroredModel under a real ``mpiexec -n 2`` / ``-n 3``, against one process.

Every worker builds its model from another seed: equal weights prove the
rank-0 broadcast. Weights after training match one process on the same
global batches within 1e-5 relative; loss, metrics, History, evaluate and
predict are the same bits on every worker.
"""
import json

import numpy
import pytest

from tests.distribute import multi_worker_cases as cases
from tests.distribute.helpers import assert_weights_close


@pytest.fixture(autouse=True)
def _needs_mpi():
    cases.skip_without_mpi()


def _check_against_single(tmp_path, processes, config, global_batch):
    code, output, _ = cases.launch(processes, config, tmp_path)
    assert code == 0, output
    loaded = cases.results(tmp_path, processes)
    weights, predict, history, evaluation = cases.single_process(config, global_batch)
    reference_weights, reference_predict, reference_logs = loaded[0]
    for other_weights, other_predict, other_logs in loaded[1:]:  # the same bits on every worker
        assert all(numpy.array_equal(a, b) for a, b in zip(other_weights, reference_weights))
        assert other_logs == reference_logs
        if predict is not None and config["data"] == "global":
            assert numpy.array_equal(other_predict, reference_predict)
    assert_weights_close(reference_weights, weights, rtol=1e-5)
    logs = reference_logs
    assert sorted(logs["history"]) == sorted(history)
    for key, values in history.items():
        assert len(logs["history"][key]) == len(values), key
        numpy.testing.assert_allclose(logs["history"][key], values, rtol=1e-5, err_msg=key)
    for key, value in evaluation.items():
        numpy.testing.assert_allclose(logs["evaluate"][key], value, rtol=1e-5, err_msg=key)
    if config["data"] == "global":
        numpy.testing.assert_allclose(reference_predict, predict, rtol=1e-4, atol=1e-6)
    return output


def test_two_workers_dense_sgd_momentum_whole_data_uneven_batches(tmp_path):
    # 47 samples, global batch 10: the last batch (7) splits 4 + 3.
    config = {"model": "dense", "optimizer": "sgd", "data": "global", "count": 47, "batch": 10, "epochs": 2,
              "shuffle": True}
    _check_against_single(tmp_path, 2, config, 10)


def test_three_workers_conv_adam_whole_data_uneven_batches(tmp_path):
    # Global batch 8 over 3 workers: 3 + 3 + 2; the last batch (5 of 29) 2 + 2 + 1.
    config = {"model": "conv", "optimizer": "adam", "data": "global", "count": 29, "batch": 8, "epochs": 2,
              "shuffle": False}
    _check_against_single(tmp_path, 3, config, 8)


def test_synchronized_batch_norm_over_three_workers_matches_one_process(tmp_path):
    # Batch statistics of the global batch (sums over the workers in forward
    # and backward); moving statistics (weights too) as one process's.
    config = {"model": "conv_bn", "optimizer": "sgd", "data": "global", "count": 30, "batch": 9, "epochs": 2,
              "shuffle": False, "sync_batch_norm": True}
    _check_against_single(tmp_path, 3, config, 9)


def test_sharded_data_on_two_replicas_per_worker_trains_as_one_process_on_the_global_batch(tmp_path):
    # Worker shards of 24 and 23 rows, 6 per worker and step = one process's
    # batches of 12; each worker splits its 6 over two logical CPUs (3 + 3,
    # and 3 + 2 for worker 1's last batch of 5). Validation on the shards:
    # val_loss and val_accuracy of all the data.
    config = {"model": "conv", "optimizer": "sgd", "data": "sharded", "count": 47, "batch": 6, "epochs": 2,
              "shuffle": False, "replicas": 2, "validation": True}
    _check_against_single(tmp_path, 2, config, 12)


def test_scattered_data_three_workers_adam_with_callbacks_and_files_on_rank_0(tmp_path):
    # Worker 0 sends the shards; ReduceLROnPlateau and EarlyStopping must
    # decide alike everywhere (History as one process); only worker 0 writes
    # the CSV log and the checkpoint, and prints one progress bar.
    config = {"model": "dense", "optimizer": "adam", "data": "scatter", "count": 48, "batch": 4, "epochs": 6,
              "shuffle": False, "callbacks": True, "verbose": 1}
    output = _check_against_single(tmp_path, 3, config, 12)
    history = json.loads((tmp_path / "history_0.json").read_text())["history"]
    assert len(history["loss"]) < 6  # EarlyStopping did stop, on every worker alike (checked above)
    assert (tmp_path / "log_0.csv").exists() and (tmp_path / "model_0.h5").exists()
    assert not any((tmp_path / name).exists() for name in ("log_1.csv", "log_2.csv", "model_1.h5", "model_2.h5"))
    assert output.count("Epoch 1/6\n") == 1  # one progress display, worker 0's
    import minikeras as mk

    saved = mk.models.load_model(tmp_path / "model_0.h5", compile=False)  # the plain model
    assert isinstance(saved, mk.Sequential)
    final = mk.models.load_model(tmp_path / "final.h5")
    assert_weights_close(final.get_weights(), cases.results(tmp_path, 3)[1][0], rtol=0)
    assert (tmp_path / "final_0.weights.h5").exists()
    assert not (tmp_path / "final_1.weights.h5").exists() and not (tmp_path / "final_2.weights.h5").exists()
