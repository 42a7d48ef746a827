"""One worker of the multi-worker tests, run by ``mpiexec -n N`` (not a test module).

``python mpi_worker.py CONFIG_JSON``; writes ``result_<rank>.npz`` and
``history_<rank>.json`` into the config's ``out`` folder. Every worker builds
its model from another seed, so equal results prove the rank-0 broadcast.
"""
import json
import os
import signal
import sys

import numpy

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import minikeras as mk  # noqa: E402
from minikeras import callbacks  # noqa: E402
from minikeras.distribute import MultiWorkerMirroredModel, scatter_dataset, shard  # noqa: E402

import multi_worker_cases as cases  # noqa: E402


class _Fault(callbacks.Callback):
    """Makes worker 1 fail at its second step: killed, gone with os._exit(0), or raising."""

    def __init__(self, kind, rank):
        super().__init__()
        self.kind, self.rank = kind, rank

    def on_train_batch_end(self, batch, logs=None):
        if self.rank != 1 or batch != 1:
            return
        if self.kind == "kill":
            os.kill(os.getpid(), signal.SIGKILL)
        if self.kind == "exit0":
            os._exit(0)  # no traceback, no MPI_Finalize, status 0
        raise RuntimeError("worker 1 fails on purpose")


def _fail_before_starting_mpi(config):
    """Worker 1 raises before anything starts MPI; worker 0 starts it in
    MultiWorkerMirroredModel() and waits there for worker 1."""
    rank = next(os.environ[name] for name in ("PMI_RANK", "OMPI_COMM_WORLD_RANK", "PMIX_RANK") if name in os.environ)
    if rank == "1":
        raise RuntimeError("worker 1 fails before starting MPI on purpose")
    MultiWorkerMirroredModel(cases.build("dense", seed=100), timeout=config["timeout"])
    print(f"worker {rank} got past MPI_Init", flush=True)


def main():
    config = json.loads(sys.argv[1])
    if config.get("fault") == "before_mpi":
        return _fail_before_starting_mpi(config)
    from mpi4py import MPI

    rank, size = MPI.COMM_WORLD.Get_rank(), MPI.COMM_WORLD.Get_size()
    devices = None
    if config.get("replicas", 1) > 1:  # several replicas per worker: logical CPUs
        cpu = mk.config.list_physical_devices("CPU")[0]
        mk.config.set_logical_device_configuration(cpu, [mk.config.LogicalDeviceConfiguration()] * config["replicas"])
        devices = [f"cpu:{index}" for index in range(config["replicas"])]
    # Start together (a slow start-up under load is not what the timeouts test).
    MPI.COMM_WORLD.Barrier()
    hidden = 17 if (config.get("fault") == "mismatch" and rank == 1) else 16
    model = cases.build(config["model"], seed=100 + rank, hidden=hidden)
    abort = not (config.get("fault") == "raise" and rank == 1)  # worker 1 then just exits: the others time out
    trainer = MultiWorkerMirroredModel(model, devices=devices, data="global" if config["data"] == "global" else "sharded",
                                       timeout=config.get("timeout", 60), abort_on_error=abort,
                                       sync_batch_norm=config.get("sync_batch_norm", False))
    x, y = cases.data(config["model"], config["count"])
    if config.get("fault") == "raise_outside_fit" and rank == 1:
        raise RuntimeError("worker 1 fails outside fit on purpose")  # worker 0 goes on into fit
    if config["data"] == "sharded":
        x, y = shard((x, y), size, rank)
    elif config["data"] == "scatter":
        x, y = scatter_dataset((x, y) if rank == 0 else None)
    trainer.compile(cases.optimizer(config["optimizer"]), cases.loss(), metrics=["accuracy"])
    out = config["out"]
    used = []
    if config.get("callbacks"):
        used = cases.deciding_callbacks() + [callbacks.CSVLogger(os.path.join(out, f"log_{rank}.csv")),
                                             callbacks.ModelCheckpoint(os.path.join(out, f"model_{rank}.h5"))]
    if config.get("fault") in ("raise", "kill", "exit0"):
        used.append(_Fault(config["fault"], rank))
    mk.random.seed(7 + (rank if config.get("fault") == "seeds" else 0))  # the shuffling seed, the same everywhere
    validation = (x, y) if config.get("validation") else None
    history = trainer.fit(x, y, batch_size=config["batch"], epochs=config["epochs"], shuffle=config["shuffle"],
                          verbose=config.get("verbose", 0), callbacks=used, validation_data=validation)
    evaluation = trainer.evaluate(x, y, batch_size=config["batch"], verbose=0, return_dict=True)
    arrays = {f"w{i}": value for i, value in enumerate(trainer.get_weights())}
    if config["data"] == "global":
        arrays["predict"] = trainer.predict(x, batch_size=config["batch"])
    if config.get("callbacks"):
        trainer.save(os.path.join(out, "final.h5"))  # every worker runs it, worker 0 writes
        trainer.save_weights(os.path.join(out, f"final_{rank}.weights.h5"))
    numpy.savez(os.path.join(out, f"result_{rank}.npz"), **arrays)
    with open(os.path.join(out, f"history_{rank}.json"), "w") as file:
        json.dump({"history": history.history, "evaluate": evaluation}, file)


if __name__ == "__main__":
    main()
