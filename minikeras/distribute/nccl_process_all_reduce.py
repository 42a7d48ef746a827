"""NCCL across processes, bootstrapped over MPI (behind MpiAllReduce).

Each process contributes the partial sums of its local replicas, which live
on its first replica's GPU; one NCCL communicator spans the processes (one
rank per process), made from a unique id that process 0 draws and
broadcasts over MPI. Before every ``ncclAllReduce`` the processes meet in
an MPI barrier under the group's timeout, because NCCL itself would wait
forever for a dead peer: a worker that failed earlier in the step breaks
the barrier, and nobody enters NCCL.

NOT YET RUN ACROSS TWO GPUS: the one GPU lent so far (an H200) showed that
processes sharing a GPU get NCCL_ERROR_INVALID_USAGE (one rank per GPU), so
they use MPI on host buffers, the tested path (``nccl="auto"`` also uses it
whenever NCCL is not importable or a replica is not a GPU).
"""
import hashlib
import socket

import numpy

from minikeras.distribute.nccl_all_reduce import _nccl_module


def make(device, group, nccl):
    """The NCCL transport for ``device``, or None for MPI on host buffers.

    Args:
        device: this process's first replica's device (holds the partial sums).
        group: the ProcessGroup.
        nccl: "auto", True or False (see MpiAllReduce).

    Raises:
        RuntimeError: ``nccl=True`` but NCCL cannot be used.
    """
    if nccl not in ("auto", True, False):
        raise ValueError(f"nccl must be 'auto', True or False, received {nccl!r}.")
    if nccl is False or group.size < 2:
        return None
    module = _nccl_module() if device.cuda_id is not None else None
    # Every process must take the same branch: agree on it (one collective).
    rows = group.gather_rows([1.0 if module is not None else 0.0, _gpu_identity(device)], what="NCCL set-up")
    everyone_can = rows[:, 0].min() > 0
    # NCCL takes one rank per GPU: workers sharing a GPU (several on a
    # one-GPU machine) get NCCL_ERROR_INVALID_USAGE from the first
    # all-reduce (seen on an H200), so they use MPI on host buffers.
    one_gpu_each = len(set(rows[:, 1].tolist())) == group.size
    if not (everyone_can and one_gpu_each):
        if nccl is True:
            why = ("each needs a GPU replica and CuPy with NCCL" if not everyone_can else
                   "NCCL takes one process per GPU, and some workers share a GPU")
            raise RuntimeError(f"MpiAllReduce(nccl=True): NCCL is not usable on every worker ({why}); use "
                               "nccl='auto' to fall back to MPI.")
        return None
    return NcclAcrossProcesses(device, group, module)


def _gpu_identity(device):
    """This process's GPU as a number equal across processes only for the same
    GPU (host name and PCI bus id; 56 bits, exact in float64); 0 for none."""
    if device.cuda_id is None:
        return 0.0
    try:
        bus = device.xp.cuda.runtime.deviceGetPCIBusId(device.cuda_id)
    except Exception:  # noqa: BLE001  (a fake or simulated GPU has no bus: its index stands in)
        bus = f"index {device.cuda_id}"
    digest = hashlib.blake2b(f"{socket.gethostname()}/{bus}".encode(), digest_size=7).digest()
    return float(int.from_bytes(digest, "little"))


class NcclAcrossProcesses:
    """Sums GPU arrays over the processes with one NCCL communicator."""

    def __init__(self, device, group, nccl):
        self.device, self.group, self._nccl = device, group, nccl
        # CuPy 14: get_unique_id() returns 128 bytes and NcclCommunicator
        # takes them as ``bytes commId`` (cupy_backends/cuda/libs/nccl.pyx,
        # v14.2.0; docs/source/upgrade.rst). Process 0 draws the id and MPI
        # carries it to the others as raw bytes.
        unique_id = bytes(nccl.get_unique_id()) if group.rank == 0 else b""
        unique_id = group.broadcast_bytes(unique_id, what="NCCL unique id")
        with device.activate():
            self._comm = nccl.NcclCommunicator(group.size, unique_id, group.rank)
        self._types = {numpy.dtype("float16"): nccl.NCCL_FLOAT16, numpy.dtype("float32"): nccl.NCCL_FLOAT32,
                       numpy.dtype("float64"): nccl.NCCL_FLOAT64}

    def sum(self, values, layout):
        """The sums of ``values`` (arrays on ``device``, numbers or None)."""
        totals = [None] * len(values)
        if layout.numbers:
            rows = self.group.gather_rows([0.0 if values[i] is None else float(values[i])
                                           for i, _ in layout.numbers], what="all-reduce")
            for column, (index, _) in enumerate(layout.numbers):
                totals[index] = float(sum(rows[:, column]))
        self.group.barrier("all-reduce (before NCCL)")
        xp = self.device.xp
        with self.device.activate():
            for dtype, members in layout.groups.items():
                if dtype not in self._types:
                    raise TypeError(f"NCCL across processes: dtype {dtype} is not supported (float16/32/64).")
                flat = xp.zeros(layout.sizes[dtype], dtype=dtype)
                offset = 0
                for index, _, size in members:
                    if values[index] is not None:
                        flat[offset:offset + size] = xp.asarray(values[index]).reshape(-1)
                    offset += size
                self._comm.allReduce(flat.data.ptr, flat.data.ptr, flat.size, self._types[dtype],
                                     self._nccl.NCCL_SUM, self.device.stream.ptr)
                self.device.synchronize()
                offset = 0
                for index, shape, size in members:
                    totals[index] = flat[offset:offset + size].reshape(shape)
                    offset += size
        return totals

    def close(self):
        """Destroy the communicator."""
        if self._comm is not None:
            self._comm.destroy()
            self._comm = None
