"""Data parallelism: MirroredModel and the all-reduce collectives.

Example:
    >>> mirrored = minikeras.MirroredModel(model)      # all GPUs, else all logical CPUs
    >>> mirrored.compile("adam", "sparse_categorical_crossentropy")
    >>> mirrored.fit(x, y, batch_size=256)             # doctest: +SKIP
"""
from minikeras.distribute.all_reduce import AllReduce, ReplicaAborted, default_all_reduce
from minikeras.distribute.local_all_reduce import LocalAllReduce
from minikeras.distribute.mirrored_model import MirroredModel
from minikeras.distribute.mpi_all_reduce import MpiAllReduce
from minikeras.distribute.nccl_all_reduce import NcclAllReduce

__all__ = ["MirroredModel", "AllReduce", "LocalAllReduce", "NcclAllReduce", "MpiAllReduce", "ReplicaAborted",
           "default_all_reduce"]
