"""MpiAllReduce: sums across processes with mpi4py (optional dependency).

One process per machine (or per device): the replicas of a process are
first summed locally (:func:`default_all_reduce`), then one thread of the
process runs ``MPI_Allreduce`` on a flat host buffer per dtype, and every
local replica takes the global sums. With MirroredModel every process must
see the same batches (same data, same shuffling seed): the global batch is
split over all the replicas of all the processes.

Example (run with ``mpirun -n 2 python train.py``)::

    from minikeras.distribute import MirroredModel, MpiAllReduce
    mirrored = MirroredModel(model, devices=["cpu:0"], all_reduce=MpiAllReduce(["cpu:0"]))

If one process fails during a step, the others wait in MPI: end the job
(``comm.Abort()``), as with any MPI program.
"""
import threading

import numpy

from minikeras import backend
from minikeras.device import registry
from minikeras.distribute.all_reduce import AllReduce, ReplicaAborted, default_all_reduce


class MpiAllReduce(AllReduce):
    """All-reduce across the processes of an MPI communicator.

    Args:
        devices: this process's replicas' logical devices (names or Devices).
        comm: an mpi4py communicator (``MPI.COMM_WORLD`` by default); any
            object with ``Get_rank``, ``Get_size``, ``allgather`` and
            ``Allreduce(send, recv)`` (sum) works.

    Raises:
        ImportError: mpi4py is not installed and no ``comm`` was given.
    """

    def __init__(self, devices, comm=None):
        devices = [registry.get_device(device) for device in devices]
        super().__init__(devices)
        if comm is None:
            try:
                from mpi4py import MPI
            except ImportError as error:
                raise ImportError(
                    "MpiAllReduce needs mpi4py (pip install mpi4py, with an MPI library), or pass comm=."
                ) from error
            comm = MPI.COMM_WORLD
        self.comm = comm
        self.process_count = int(comm.Get_size())
        self.process_index = int(comm.Get_rank())
        self._local = default_all_reduce(devices)
        self._partial = None
        self._global = None
        self._exchanged = threading.Barrier(self.size, action=self._exchange)

    def all_reduce(self, rank, arrays):
        """See :meth:`AllReduce.all_reduce`."""
        partial = self._local.all_reduce(rank, arrays)
        if rank == 0:
            self._partial = [registry.to_host(value) if backend.is_array(value) else value for value in partial]
        try:
            self._exchanged.wait()
        except threading.BrokenBarrierError:
            raise ReplicaAborted("another replica failed during this step; the step was abandoned") from None
        totals = self._global
        device = self.devices[rank]
        return [device.asarray(value) if isinstance(value, numpy.ndarray) else value for value in totals]

    def _exchange(self):
        """One thread per process: the global sums of the local sums."""
        partial, self._partial = self._partial, None
        described = [None if value is None else
                     ("number", value) if not isinstance(value, numpy.ndarray) else
                     ("array", value.shape, value.dtype.str) for value in partial]
        everyone = self.comm.allgather(described)
        totals = [None] * len(partial)
        groups = {}
        for index in range(len(partial)):
            entries = [process[index] for process in everyone if process[index] is not None]
            if not entries:
                continue
            if entries[0][0] == "number":
                total = entries[0][1]
                for _, value in entries[1:]:
                    total = total + value  # process order: the same on every process
                totals[index] = total
            else:
                groups.setdefault(entries[0][2], []).append((index, tuple(entries[0][1])))
        for dtype, members in groups.items():
            sizes = [int(numpy.prod(shape, dtype=numpy.int64)) for _, shape in members]
            send = numpy.zeros(sum(sizes), dtype=numpy.dtype(dtype))
            offset = 0
            for (index, _), size in zip(members, sizes):
                if partial[index] is not None:
                    send[offset:offset + size] = partial[index].reshape(-1)
                offset += size
            receive = numpy.empty_like(send)
            self.comm.Allreduce(send, receive)
            offset = 0
            for (index, shape), size in zip(members, sizes):
                totals[index] = receive[offset:offset + size].reshape(shape)
                offset += size
        self._global = totals

    def abort(self):
        """See :meth:`AllReduce.abort` (this process's replicas only)."""
        self._local.abort()
        self._exchanged.abort()

    def reset(self):
        """See :meth:`AllReduce.reset`."""
        self._local.reset()
        self._exchanged.reset()

    def close(self):
        """Close the local transport."""
        self._local.close()
