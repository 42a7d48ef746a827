"""Multi-worker faults under a real mpiexec: a dead or raising worker ends
the job with an error within the timeout, never a hang; different models
are refused at start, naming the layer."""
import pytest

from tests.distribute import multi_worker_cases as cases

BASE = {"model": "dense", "optimizer": "sgd", "data": "global", "count": 40, "batch": 4, "epochs": 3,
        "shuffle": False}


@pytest.fixture(autouse=True)
def _needs_mpi():
    cases.skip_without_mpi()


def test_a_raising_worker_makes_the_others_time_out_with_a_clear_error(tmp_path):
    # Worker 1 raises and exits without ending the job; worker 0 waits in
    # the next all-reduce until its 3 s timeout, then reports and aborts.
    code, output, seconds = cases.launch(2, dict(BASE, fault="raise", timeout=3), tmp_path, timeout=60)
    assert code != 0, output
    assert "worker 1 fails on purpose" in output, output
    assert "WorkerTimeoutError" in output and "got no answer from the other workers within 3 s" in output, output
    assert seconds < 60  # start-up included, on a loaded machine
    assert not (tmp_path / "result_0.npz").exists()


def test_a_worker_raising_outside_fit_ends_the_job_at_once_with_its_traceback(tmp_path):
    # Worker 1 raises before fit; worker 0 enters fit's first collective. With
    # abort_on_error the job ends in seconds, not after the 300 s timeout.
    code, output, seconds = cases.launch(2, dict(BASE, fault="raise_outside_fit", timeout=300), tmp_path, timeout=90)
    assert code != 0, output
    assert "Traceback" in output and "RuntimeError: worker 1 fails outside fit on purpose" in output, output
    assert "worker 1 of 2 failed outside fit; ending the job (abort_on_error=True)" in output, output
    assert "WorkerTimeoutError" not in output, output
    assert seconds < 60  # start-up included, on a loaded machine; a timeout would take 300 s


def test_a_killed_worker_ends_the_job(tmp_path):
    code, output, seconds = cases.launch(3, dict(BASE, fault="kill", timeout=5), tmp_path, timeout=60)
    assert code != 0, output
    assert "signal 9" in output or "WorkerTimeoutError" in output, output
    assert seconds < 60  # start-up included, on a loaded machine
    assert not any((tmp_path / f"result_{rank}.npz").exists() for rank in range(3))


def test_a_worker_that_fails_before_starting_mpi_ends_the_job_within_the_timeout(tmp_path):
    # Worker 1 raises before MPI starts; worker 0 waits in MPI_Init (inside
    # MultiWorkerMirroredModel()), which has no timeout of its own.
    code, output, seconds = cases.launch(2, dict(BASE, fault="before_mpi", timeout=3), tmp_path, timeout=90)
    assert code != 0, output
    assert "RuntimeError: worker 1 fails before starting MPI on purpose" in output, output
    assert "minikeras worker 0 of 2: starting MPI (MPI_Init) got no answer from the other workers within 3 s" in output, \
        output
    assert "got past MPI_Init" not in output, output
    assert seconds < 60  # start-up included, on a loaded machine; it waited forever before


def test_a_worker_gone_with_os_exit_0_mid_training_ends_the_job_with_an_error(tmp_path):
    # Hydra ended such a job at once with status 0, the chief killed mid-training.
    code, output, seconds = cases.launch(2, dict(BASE, fault="exit0", timeout=3), tmp_path, timeout=90)
    assert code != 0, output
    assert "minikeras worker 1 of 2: its process ended without exiting Python (os._exit" in output, output
    assert "WorkerTimeoutError" in output and "got no answer from the other workers within 3 s" in output, output
    assert seconds < 60  # start-up included, on a loaded machine
    assert not any((tmp_path / f"result_{rank}.npz").exists() for rank in range(2))


def test_different_models_are_refused_at_start_naming_the_layer(tmp_path):
    code, output, seconds = cases.launch(2, dict(BASE, fault="mismatch", timeout=30), tmp_path, timeout=60)
    assert code != 0, output
    assert "The workers' models differ" in output, output
    assert "'dense'" in output and "(8, 17)" in output and "(8, 16)" in output, output


def test_whole_data_with_different_shuffling_seeds_is_refused(tmp_path):
    code, output, _ = cases.launch(2, dict(BASE, shuffle=True, fault="seeds", timeout=30), tmp_path, timeout=60)
    assert code != 0, output
    assert "every worker must shuffle alike: call minikeras.random.seed(s) with the same s" in output, output


def test_shards_giving_different_numbers_of_batches_are_refused(tmp_path):
    # 5 rows over 2 workers: shards of 3 and 2, batch 1 -> 3 and 2 steps.
    config = dict(BASE, data="sharded", count=5, batch=1, timeout=30)
    code, output, _ = cases.launch(2, config, tmp_path, timeout=60)
    assert code != 0, output
    assert "every worker must run the same number of batches; the shards give [3, 2]" in output, output


def test_synchronized_batch_norm_refuses_a_batch_leaving_a_worker_without_samples(tmp_path):
    # 29 samples, batch 9: the last batch (2) leaves worker 2 nothing to add.
    config = dict(BASE, model="conv_bn", count=29, batch=9, sync_batch_norm=True, timeout=30)
    code, output, _ = cases.launch(3, config, tmp_path, timeout=60)
    assert code != 0, output
    assert "every worker needs samples in every batch, the batch of 2 gives the workers [1, 1, 0]" in output, output
