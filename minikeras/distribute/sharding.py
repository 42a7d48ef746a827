"""Giving each worker its shard of a data set.

Shards are strided: worker ``i`` of ``n`` takes rows ``i, i + n, i + 2n...``.
Then, without shuffling, step ``k`` of worker ``i`` with ``batch_size = B/n``
holds rows of the global batch ``k`` of size ``B`` taken in order, so the
workers' batches together are exactly one process's batches (and
``MultiWorkerMirroredModel(data="sharded")`` trains as one process would
on the global batch, up to the order of additions). Shard sizes differ by
at most one row.

- :func:`shard`: each worker loads (or memory-maps) the data itself and
  keeps its rows, e.g. ``x[i::n]`` of a ``numpy.load(..., mmap_mode="r")``;
- :func:`scatter_dataset`: worker 0 alone holds the data and sends each
  worker its shard (ChainerMN's ``scatter_dataset``), by MPI ``Iscatterv``
  of raw bytes under the timeout (nothing is pickled).
"""
import json

import numpy

from minikeras.distribute.process_group import DEFAULT_TIMEOUT, ProcessGroup
from minikeras._support import nest


def shard(arrays, num_workers, worker_index):
    """Worker ``worker_index``'s rows of ``arrays`` (strided, see above).

    Args:
        arrays: an array, or a list/tuple/dict of arrays with the same
            number of rows.
        num_workers: how many workers share the data.
        worker_index: this worker's rank, ``0 <= worker_index < num_workers``.

    Returns:
        The same structure holding the worker's rows (views, no copies).
    """
    if not isinstance(num_workers, (int, numpy.integer)) or num_workers < 1:
        raise ValueError(f"shard: num_workers must be a positive int, received {num_workers!r}.")
    if not isinstance(worker_index, (int, numpy.integer)) or not 0 <= worker_index < num_workers:
        raise ValueError(f"shard: worker_index must be in [0, {num_workers}), received {worker_index!r}.")
    sizes = {len(leaf) for leaf in nest.flatten(arrays)}
    if len(sizes) > 1:
        raise ValueError(f"shard: all arrays must have the same number of rows, received {sorted(sizes)}.")
    return nest.map_structure(lambda leaf: leaf[worker_index::num_workers], arrays)


def scatter_dataset(arrays=None, comm=None, root=0, timeout=DEFAULT_TIMEOUT):
    """Worker ``root`` sends every worker its shard of ``arrays``.

    Args:
        arrays: on ``root``, an array or a list/tuple of arrays with the same
            number of rows; ignored on the other workers.
        comm: an mpi4py communicator (default ``MPI.COMM_WORLD``).
        root: the worker that holds the data.
        timeout: seconds to wait for the other workers.

    Returns:
        This worker's shard: an array, or a tuple of arrays.
    """
    group = ProcessGroup(comm, timeout)
    description = b""
    if group.rank == root:
        single = not isinstance(arrays, (list, tuple))
        leaves = [numpy.ascontiguousarray(leaf) for leaf in ([arrays] if single else arrays)]
        sizes = {len(leaf) for leaf in leaves}
        if len(sizes) != 1:
            raise ValueError(f"scatter_dataset: all arrays must have the same number of rows, received "
                             f"{sorted(sizes)}.")
        description = json.dumps({"single": single, "rows": sizes.pop(), "leaves": [
            [list(leaf.shape[1:]), leaf.dtype.str] for leaf in leaves]}).encode()
    meta = json.loads(group.broadcast_bytes(description, root, what="scatter_dataset").decode())
    rows = [len(range(worker, meta["rows"], group.size)) for worker in range(group.size)]
    result = []
    for position, (tail, dtype) in enumerate(meta["leaves"]):
        dtype = numpy.dtype(dtype)
        row_bytes = int(numpy.prod(tail, dtype=numpy.int64)) * dtype.itemsize
        counts = [count * row_bytes for count in rows]
        received = numpy.empty((rows[group.rank],) + tuple(tail), dtype=dtype)
        if group.rank == root:
            leaf = leaves[position]
            packed = numpy.concatenate([leaf[worker::group.size] for worker in range(group.size)])
            displacements = numpy.concatenate([[0], numpy.cumsum(counts)[:-1]]).tolist()
            send = [packed.view(numpy.uint8).reshape(-1), (counts, displacements), _byte_type()]
        else:
            send = None
        request = group.comm.Iscatterv(send, [received.view(numpy.uint8).reshape(-1), _byte_type()], root=root)
        group._wait(request, "scatter_dataset")
        result.append(received)
    return result[0] if meta["single"] else tuple(result)


def _byte_type():
    from mpi4py import MPI
    return MPI.BYTE
