"""The model's own step under a real ``mpiexec -n 2`` (issue 34): every case of
step_overrides.py (a GAN with two optimizers, a compute_loss override, a
Keras-style metric, add_loss, synchronized BatchNormalization, constraints)
trains as one process on the same global batches, and every worker ends with
the same bits."""
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy
import pytest

from tests.distribute import multi_worker_cases as cases
from tests.distribute import step_overrides as overrides

WORKER = Path(__file__).resolve().parent / "mpi_overrides_worker.py"


@pytest.mark.slow
def test_two_workers_run_the_models_own_step(tmp_path):
    cases.skip_without_mpi()
    environment = cases.mpi_environment(
        PYTHONPATH=os.pathsep.join([str(cases.ROOT), os.environ.get("PYTHONPATH", "")]),
        OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    done = subprocess.run([cases.mpiexec(), "-n", "2", sys.executable, str(WORKER), str(tmp_path)], env=environment,
                          capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stdout + done.stderr
    for case in overrides.CASES:
        expected = overrides.train(case)
        runs = []
        for rank in range(2):
            with numpy.load(tmp_path / f"{case}_{rank}.npz") as arrays:
                weights = [arrays[f"w{i}"] for i in range(len(arrays.files))]
            logs = json.loads((tmp_path / f"{case}_{rank}.json").read_text())
            runs.append(dict(logs, weights=weights))
        first, second = runs
        assert all(numpy.array_equal(a, b) for a, b in zip(first["weights"], second["weights"])), case
        assert first["history"] == second["history"] and first["evaluate"] == second["evaluate"], case
        overrides.assert_same_training(first, expected)
        if case == "gan":  # each worker's replica ran the GAN's train_step on its half of every batch
            steps = overrides.COUNT // overrides.BATCH * overrides.EPOCHS
            assert first["calls"] == second["calls"] == [overrides.BATCH // 2] * steps
