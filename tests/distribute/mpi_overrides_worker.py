"""One worker of test_multi_worker_overrides.py, run by ``mpiexec -n N`` (not a test module).

``python mpi_overrides_worker.py OUT_DIR``: trains every case of
step_overrides.py under MultiWorkerMirroredModel (the same global batches on
every worker, each worker's model from another seed: equal results prove the
rank-0 broadcast) and writes ``<case>_<rank>.npz`` and ``<case>_<rank>.json``.
"""
import json
import os
import sys

import numpy

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import minikeras as mk  # noqa: E402
from minikeras.distribute import MultiWorkerMirroredModel  # noqa: E402

import step_overrides as overrides  # noqa: E402


def main():
    out = sys.argv[1]
    from mpi4py import MPI

    rank = MPI.COMM_WORLD.Get_rank()
    MPI.COMM_WORLD.Barrier()
    for case in overrides.CASES:
        trained = overrides.train(case, wrap=lambda model: MultiWorkerMirroredModel(model, timeout=60),
                                  seed=0 if rank == 0 else 10 + rank)
        numpy.savez(os.path.join(out, f"{case}_{rank}.npz"),
                    **{f"w{i}": value for i, value in enumerate(trained["weights"])})
        with open(os.path.join(out, f"{case}_{rank}.json"), "w") as file:
            json.dump({key: trained[key] for key in ("history", "evaluate", "steps")}
                      | {"calls": [rows for _, rows in trained["calls"]]}, file)
    mk.backend.clear_session()


if __name__ == "__main__":
    main()
