"""Data parallelism: MirroredModel (devices of one process),
MultiWorkerMirroredModel (processes under an MPI launcher) and the
all-reduce collectives.

Example:
    >>> mirrored = minikeras.MirroredModel(model)      # all GPUs, else all logical CPUs
    >>> mirrored.compile("adam", "sparse_categorical_crossentropy")
    >>> mirrored.fit(x, y, batch_size=256)             # doctest: +SKIP

Across processes (``mpiexec -n 4 python train.py``)::

    trainer = minikeras.distribute.MultiWorkerMirroredModel(model, data="sharded")
    x_mine, y_mine = minikeras.distribute.shard((x, y), trainer.num_workers, trainer.worker_index)
    trainer.compile("adam", "sparse_categorical_crossentropy", metrics=["accuracy"])
    trainer.fit(x_mine, y_mine, batch_size=64)         # 64 per worker
"""
from minikeras.distribute.all_reduce import AllReduce, ReplicaAborted, default_all_reduce
from minikeras.distribute.local_all_reduce import LocalAllReduce
from minikeras.distribute.mirrored_model import MirroredModel
from minikeras.distribute.mpi_all_reduce import MpiAllReduce
from minikeras.distribute.multi_worker import MultiWorkerMirroredModel
from minikeras.distribute.nccl_all_reduce import NcclAllReduce
from minikeras.distribute.process_group import ProcessGroup, WorkerTimeoutError
from minikeras.distribute.sharding import scatter_dataset, shard

__all__ = ["MirroredModel", "MultiWorkerMirroredModel", "AllReduce", "LocalAllReduce", "NcclAllReduce",
           "MpiAllReduce", "ProcessGroup", "ReplicaAborted", "WorkerTimeoutError", "default_all_reduce", "shard",
           "scatter_dataset"]
