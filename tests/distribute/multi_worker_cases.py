"""Models, data and launching for the multi-worker tests (shared by the
workers under mpiexec and the single-process references)."""
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy
import pytest

import minikeras as mk
from minikeras import callbacks, layers

ROOT = Path(__file__).resolve().parents[2]
WORKER = Path(__file__).resolve().parent / "mpi_worker.py"


def build(kind, seed, hidden=16):
    mk.random.seed(seed)
    if kind == "dense":
        stack = [layers.Input((8,)), layers.Dense(hidden, activation="relu"), layers.Dense(3)]
    else:  # "conv", or "conv_bn" with batch normalization
        stack = [layers.Input((6, 6, 2)), layers.Conv2D(4, 3, activation="relu")]
        if kind == "conv_bn":
            stack.append(layers.BatchNormalization(momentum=0.9))
        stack += [layers.MaxPooling2D(2), layers.Flatten(), layers.Dense(3)]
    return mk.Sequential(stack)


def data(kind, count):
    rng = numpy.random.default_rng(0)
    shape = (8,) if kind == "dense" else (6, 6, 2)
    x = rng.normal(size=(count,) + shape).astype("float32")
    return x, rng.integers(0, 3, count)


def optimizer(name):
    if name == "sgd":
        return mk.optimizers.SGD(learning_rate=0.1, momentum=0.9)
    return mk.optimizers.Adam(learning_rate=0.01)


def loss():
    return mk.losses.SparseCategoricalCrossentropy(from_logits=True)


def deciding_callbacks():
    """Callbacks whose decisions change training: they must decide alike."""
    return [callbacks.ReduceLROnPlateau(monitor="loss", factor=0.5, patience=0, min_delta=10.0, verbose=0),
            callbacks.EarlyStopping(monitor="accuracy", patience=1, min_delta=0.2)]


def mpiexec():
    """The mpiexec next to the interpreter (the mpich wheel), else on PATH."""
    sibling = Path(sys.executable).parent / "mpiexec"
    return str(sibling) if sibling.exists() else shutil.which("mpiexec")


def mpi_environment(**extra):
    """The environment every test launch of mpiexec gets.

    mpich's hydra needs nothing; Open MPI's mpiexec (what a GPU image's
    mpi4py may bring) refuses to run as root, as containers do, and to
    start more ranks than the machine has slots, unless told.
    """
    return dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
                OMPI_MCA_rmaps_base_oversubscribe="1", PRTE_MCA_rmaps_default_mapping_policy=":oversubscribe",
                **extra)


def skip_without_mpi():
    if importlib.util.find_spec("mpi4py") is None:
        pytest.skip("mpi4py is not installed (pip install -e '.[mpi]'): multi-worker tests skipped")
    if mpiexec() is None:
        pytest.skip("no mpiexec next to the interpreter or on PATH (the mpich wheel provides one)")


def launch(processes, config, tmp_path, timeout=90, extra=()):
    """Run ``processes`` workers; returns (exit code, output, seconds)."""
    config = dict(config, out=str(tmp_path))
    environment = mpi_environment(PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
                                  OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    # More ranks than cores is fine for hydra (no binding by default, no
    # oversubscription flag), the workers just share the cores.
    command = [mpiexec(), *extra, "-n", str(processes), sys.executable, str(WORKER), json.dumps(config)]
    start = time.monotonic()
    done = subprocess.run(command, env=environment, capture_output=True, text=True, timeout=timeout)
    return done.returncode, done.stdout + done.stderr, time.monotonic() - start


def results(tmp_path, processes):
    loaded = []
    for rank in range(processes):
        with numpy.load(tmp_path / f"result_{rank}.npz") as arrays:
            weights = [arrays[f"w{i}"] for i in range(len([k for k in arrays.files if k.startswith("w")]))]
            predict = arrays["predict"] if "predict" in arrays.files else None
        logs = json.loads((tmp_path / f"history_{rank}.json").read_text())
        loaded.append((weights, predict, logs))
    return loaded


def single_process(config, global_batch):
    """One process on the same data and global batches (worker 0's seed)."""
    model = build(config["model"], seed=100)
    model.compile(optimizer(config["optimizer"]), loss(), metrics=["accuracy"])
    x, y = data(config["model"], config["count"])
    mk.random.seed(7)
    used = deciding_callbacks() if config.get("callbacks") else []
    validation = (x, y) if config.get("validation") else None
    history = model.fit(x, y, batch_size=global_batch, epochs=config["epochs"], shuffle=config["shuffle"], verbose=0,
                        callbacks=used, validation_data=validation)
    evaluation = model.evaluate(x, y, batch_size=global_batch, verbose=0, return_dict=True)
    return model.get_weights(), model.predict(x, batch_size=global_batch), history.history, evaluation
