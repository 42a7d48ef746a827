"""AllReduce: the interface every gradient transport implements.

An all-reduce is a collective: each replica, from its own thread, calls
``all_reduce(rank, arrays)`` with the same number of entries, of the same
shapes and dtypes, in the same order; every call returns the elementwise
sums, on the caller's device. The implementations:

- :class:`~minikeras.distribute.local_all_reduce.LocalAllReduce`: host or
  device-to-device copies inside one process (any mix of devices);
- :class:`~minikeras.distribute.nccl_all_reduce.NcclAllReduce`: NCCL, when
  every device is a distinct physical GPU;
- :class:`~minikeras.distribute.mpi_all_reduce.MpiAllReduce`: across
  processes with mpi4py (one process per device or per machine).

:func:`default_all_reduce` picks NCCL when it can, else the local copies.
"""


class ReplicaAborted(RuntimeError):
    """Raised in a replica waiting in a collective when another replica
    failed: the step is abandoned on every replica, none applies an update."""


class AllReduce:
    """Sums arrays across replicas (see the module docstring).

    Entries may be None, meaning "this replica contributes nothing here"
    (a replica with no samples in the batch); the result is None only where
    every replica passed None. Python numbers are summed too. Every replica
    receives the same sums, bit for bit: the reduction order is fixed, so
    replicas that apply the same update to the same weights never drift.
    Results may be shared between replicas on the same memory: treat them
    as read-only.

    Args:
        devices: the logical devices, one per replica (rank = position).

    Attributes:
        process_count: processes taking part (1 unless across processes).
        process_index: this process's position among them.
    """

    process_count = 1
    process_index = 0

    def __init__(self, devices):
        self.devices = list(devices)
        if not self.devices:
            raise ValueError(f"{type(self).__name__} needs at least one device, received none.")

    @property
    def size(self):
        """Replicas taking part in this process."""
        return len(self.devices)

    def all_reduce(self, rank, arrays, tag=None):
        """Sum ``arrays`` across replicas; called once by every replica.

        Args:
            rank: the caller's position in ``devices``.
            arrays: a list of arrays (on the caller's device), numbers or None.
            tag: a name for calls that always pass the same entries (one
                optimizer's gradients): a transport across processes agrees
                on their layout once (``MpiAllReduce``); None agrees every call.

        Returns:
            A list of the sums, on the caller's device (None where nobody
            contributed).

        Raises:
            ReplicaAborted: another replica failed and called :meth:`abort`.
        """
        raise NotImplementedError

    def abort(self):
        """Release every replica waiting in a collective with
        :class:`ReplicaAborted` (called when one replica fails)."""

    def reset(self):
        """Make the collective usable again after :meth:`abort`."""

    def close(self):
        """Release resources (communicators); the object is unusable after."""


def default_all_reduce(devices):
    """NCCL when every device is a distinct physical GPU and NCCL is
    available, else host or device-to-device copies.

    Args:
        devices: the replicas' logical devices.

    Returns:
        An :class:`AllReduce`.
    """
    from minikeras.distribute import nccl_all_reduce
    from minikeras.distribute.local_all_reduce import LocalAllReduce

    if nccl_all_reduce.usable(devices):
        return nccl_all_reduce.NcclAllReduce(devices)
    return LocalAllReduce(devices)
