"""``keras.distribution`` across processes: ``mpiexec -n 2`` workers that call
``initialize()`` and ``set_distribution(DataParallel())`` train one model on
the global batches, as one process does."""
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy
import pytest

import minikeras as mk
from minikeras import layers
from tests.distribute import multi_worker_cases as cases

WORKER = Path(__file__).resolve().parent / "mpi_data_parallel_worker.py"


@pytest.mark.slow
def test_two_processes_train_as_one(tmp_path):
    cases.skip_without_mpi()
    environment = cases.mpi_environment(
        PYTHONPATH=os.pathsep.join([str(cases.ROOT), os.environ.get("PYTHONPATH", "")]),
        OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    environment.pop("MINIKERAS_SIMULATED_GPU", None)  # one CPU replica per worker
    done = subprocess.run([cases.mpiexec(), "-n", "2", sys.executable, str(WORKER), str(tmp_path)], env=environment,
                          capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stdout + done.stderr
    mk.random.seed(10)
    with mk.device("cpu:0"):
        model = mk.Sequential([layers.Input((4,)), layers.Dense(8, activation="relu"), layers.Dense(1)])
        model.compile(mk.optimizers.Adam(0.01), "mse")
        x = numpy.random.default_rng(0).normal(size=(96, 4)).astype("float32")
        history = model.fit(x, x.sum(axis=1, keepdims=True), batch_size=16, epochs=2, shuffle=False, verbose=0)
    results = []
    for rank in range(2):
        with numpy.load(tmp_path / f"result_{rank}.npz") as arrays:
            results.append([arrays[f"arr_{i}"] for i in range(len(arrays.files))])
        logs = json.loads((tmp_path / f"history_{rank}.json").read_text())
        numpy.testing.assert_allclose(logs["loss"], history.history["loss"], rtol=2e-5)
    assert all(numpy.array_equal(a, b) for a, b in zip(*results))
    for got, want in zip(results[0], model.get_weights()):
        numpy.testing.assert_allclose(got, want, rtol=2e-5, atol=1e-6)
