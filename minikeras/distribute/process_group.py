"""ProcessGroup: the collectives between worker processes, with a timeout.

Every exchange between processes goes through MPI's non-blocking
``Iallreduce`` (sum) on flat host buffers, polled until a deadline: a
worker that died or raised outside a collective leaves the others waiting
in it, and MPI itself never gives up, so the deadline is what turns a hang
into :class:`WorkerTimeoutError`. Broadcasts and gathers are sums too (the
root's values plus zeros, one row per process), which keeps one primitive
to time out and leaves the arithmetic exact (``x + 0 == x``).

Two ways a worker can leave the others waiting where this deadline does not
reach are covered by a watcher process beside each worker
(launch_watch.py), within the same timeout: a worker that ends before it
starts MPI (the others wait in ``MPI_Init``), and one whose process
vanishes mid-job (``os._exit``), which hydra's ``mpiexec`` took for the end
of the job, with status 0.

mpi4py is imported only when a ProcessGroup is made without ``comm``.
"""
import sys
import time

import numpy

from minikeras.distribute import launch_watch

DEFAULT_TIMEOUT = 300.0


class WorkerTimeoutError(RuntimeError):
    """A collective between workers did not complete within the timeout:
    another worker died, failed, or is stuck."""


def default_comm():
    """``MPI.COMM_WORLD`` (imports mpi4py, with a clear error without it)."""
    try:
        from mpi4py import MPI
    except ImportError as error:
        raise ImportError(
            "Multi-worker training needs mpi4py and an MPI library: pip install 'minikeras[mpi]' "
            "(mpi4py and the mpich wheel), then launch with mpiexec -n N python train.py."
        ) from error
    return MPI.COMM_WORLD


_IN_PLACE = []


def _in_place():
    if not _IN_PLACE:
        try:
            from mpi4py import MPI
        except ImportError:  # a stand-in communicator (tests) sums in place anyway
            return None
        _IN_PLACE.append(MPI.IN_PLACE)
    return _IN_PLACE[0]


class ProcessGroup:
    """The worker processes of an MPI communicator.

    Args:
        comm: an mpi4py communicator (``MPI.COMM_WORLD`` by default).
        timeout: seconds any one collective may wait for the other workers
            before :class:`WorkerTimeoutError` (None: wait forever).

    Attributes:
        rank: this process's index; size: the number of processes.
    """

    def __init__(self, comm=None, timeout=DEFAULT_TIMEOUT):
        if timeout is not None and (isinstance(timeout, bool) or not isinstance(timeout, (int, float))
                                    or timeout <= 0):
            raise ValueError(f"timeout must be a positive number of seconds or None, received {timeout!r}.")
        self.timeout = None if timeout is None else float(timeout)
        starts_mpi = comm is None and "mpi4py.MPI" not in sys.modules  # importing it starts MPI (MPI_Init)
        launch_watch.start(self.timeout if starts_mpi else None, self.timeout)
        self.comm = default_comm() if comm is None else comm
        launch_watch.started()
        self.rank = int(self.comm.Get_rank())
        self.size = int(self.comm.Get_size())

    # ----------------------------------------------------------- primitive
    def sum_in_place(self, buffer, what="all-reduce"):
        """Sum a contiguous host array over all processes, in place.

        Args:
            buffer: a C-contiguous NumPy array (every process the same size
                and dtype).
            what: names the operation in a timeout error.

        Returns:
            ``buffer``, now holding the sums.

        Raises:
            WorkerTimeoutError: the others did not join within the timeout.
        """
        if self.size == 1:
            return buffer
        request = self.comm.Iallreduce(_in_place(), buffer)
        self._wait(request, what)
        return buffer

    def _wait(self, request, what):
        start = time.monotonic()
        spins = 0
        test = request.Test
        while not test():
            spins += 1
            if spins < 2000:  # a step's collective is usually answered at once
                continue
            if self.timeout is not None and time.monotonic() - start > self.timeout:
                raise WorkerTimeoutError(
                    f"minikeras worker {self.rank} of {self.size}: {what} got no answer from the other workers "
                    f"within {self.timeout:g} s; a worker died, raised an error or is stuck (see its output). "
                    "Raise the timeout (timeout=...) for steps slower than that."
                )
            time.sleep(0.0002 if spins < 20000 else 0.002)

    # ------------------------------------------------------------- derived
    def gather_rows(self, values, dtype=numpy.float64, what="gather"):
        """Every process's vector, as rows: ``result[p]`` is process p's.

        Args:
            values: a 1-d sequence of the same length on every process.

        Returns:
            An array of shape ``(size, len(values))``.
        """
        values = numpy.asarray(values, dtype=dtype).reshape(-1)
        rows = numpy.zeros((self.size, values.size), dtype=dtype)
        rows[self.rank] = values
        return self.sum_in_place(rows, what)

    def gather_scalars(self, value, what="gather"):
        """One float64 per process, as a vector indexed by process."""
        return self.gather_rows([value], what=what)[:, 0]

    def broadcast(self, array, root=0, what="broadcast"):
        """``array`` of process ``root`` on every process (a new array).

        Args:
            array: a host array; its shape and dtype must be the same on
                every process (only the root's values matter).
        """
        array = numpy.asarray(array)
        result = numpy.ascontiguousarray(array) if self.rank == root else numpy.zeros_like(array)
        result = numpy.array(result, order="C", copy=True)
        if array.dtype == numpy.bool_:
            return self.sum_in_place(result.view(numpy.uint8), what).view(numpy.bool_)
        return self.sum_in_place(result, what)

    def broadcast_bytes(self, data, root=0, what="broadcast"):
        """Bytes of process ``root`` on every process."""
        length = int(self.broadcast(numpy.array([len(data)], dtype=numpy.int64), root, what)[0])
        buffer = numpy.frombuffer(data, dtype=numpy.uint8) if self.rank == root else numpy.zeros(length, numpy.uint8)
        if buffer.size != length:  # not the root: sized by the root's length
            buffer = numpy.zeros(length, numpy.uint8)
        return self.broadcast(buffer, root, what).tobytes()

    def barrier(self, what="barrier"):
        """Wait (within the timeout) until every process got here."""
        self.sum_in_place(numpy.zeros(1, dtype=numpy.int32), what)

    def abort(self, code=1):
        """End every process of the job (``MPI_Abort``)."""
        launch_watch.finished()  # this end has its own error: the watcher need not report it
        self.comm.Abort(code)
