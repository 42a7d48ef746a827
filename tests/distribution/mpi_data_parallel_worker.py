"""One worker of test_distribution_mpi.py, run by ``mpiexec -n 2`` (not a test module):
``initialize()``, ``set_distribution(DataParallel())`` and a plain fit, as
Keras's multi-host guide writes it; writes ``result_<rank>.npz``."""
import json
import os
import sys

import numpy

import minikeras as mk
from minikeras import layers


def main():
    out = sys.argv[1]
    mk.distribution.initialize()
    mk.distribution.set_distribution(mk.distribution.DataParallel())
    rank = mk.distribution.distribution()._process_id
    mk.random.seed(10 + rank)  # each worker its own initial weights: worker 0's are broadcast
    model = mk.Sequential([layers.Input((4,)), layers.Dense(8, activation="relu"), layers.Dense(1)])
    model.compile(mk.optimizers.Adam(0.01), "mse")
    rng = numpy.random.default_rng(0)
    x = rng.normal(size=(96, 4)).astype("float32")
    history = model.fit(x, x.sum(axis=1, keepdims=True), batch_size=16, epochs=2, shuffle=False, verbose=0)
    numpy.savez(os.path.join(out, f"result_{rank}.npz"), *model.get_weights())
    with open(os.path.join(out, f"history_{rank}.json"), "w") as file:
        json.dump(history.history, file)


if __name__ == "__main__":
    main()
