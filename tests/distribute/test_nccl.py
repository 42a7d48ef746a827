"""NCCL transports on the simulated CuPy with a fake ``cupy.cuda.nccl`` that
has CuPy 14.2's exact API (minikeras/testing/sim_nccl.py, resolving device
pointers in the simulated CuPy's memory): the unique id is
``bytes`` and ``NcclCommunicator`` refuses anything else, so the set-up that
CuPy 14 would break on a real GPU (finding 1 of issue 20) breaks here too."""
import threading
import types

import numpy
import pytest

from minikeras.distribute import nccl_all_reduce, nccl_process_all_reduce
from minikeras.testing.sim_cupy.simulation import host_view
from minikeras.testing.sim_nccl import SimNccl


class ThreadGroup:
    """The ProcessGroup calls NCCL's set-up uses, for ranks that are threads."""

    def __init__(self, shared, rank):
        self.shared, self.rank, self.size = shared, rank, shared["size"]

    def _exchange(self, value):
        slots = self.shared["slots"]
        slots[self.rank] = value
        self.shared["barrier"].wait(10)
        result = list(slots)
        self.shared["barrier"].wait(10)
        return result

    def broadcast(self, array, root=0, what="broadcast"):
        return numpy.array(self._exchange(numpy.asarray(array))[root], copy=True)

    def broadcast_bytes(self, data, root=0, what="broadcast"):
        return self._exchange(data)[root]

    def gather_rows(self, values, what="gather"):
        return numpy.array(self._exchange(list(values)), dtype=numpy.float64)

    def gather_scalars(self, value, what="gather"):
        return numpy.array(self._exchange(float(value)))

    def barrier(self, what="barrier"):
        self._exchange(None)


def _groups(size):
    shared = {"size": size, "slots": [None] * size, "barrier": threading.Barrier(size)}
    return [ThreadGroup(shared, rank) for rank in range(size)]


def _run_ranks(work, size):
    results, errors = [None] * size, []

    def run(rank):
        try:
            results[rank] = work(rank)
        except BaseException as error:  # reported below, in the test's thread
            errors.append(error)

    threads = [threading.Thread(target=run, args=(rank,)) for rank in range(size)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    if errors:
        raise errors[0]
    return results


@pytest.fixture
def two_simulated_gpus(simulated_gpus):
    return simulated_gpus("2")


def test_fake_nccl_refuses_what_cupy_14_refuses():
    nccl = SimNccl(host_view)
    unique_id = nccl.get_unique_id()
    assert isinstance(unique_id, bytes) and len(unique_id) == 128
    with pytest.raises(TypeError, match="expected bytes, got tuple"):
        nccl.NcclCommunicator(1, tuple(unique_id), 0)
    with pytest.raises(ValueError, match="commId length 4 != 128"):
        nccl.NcclCommunicator(1, b"abcd", 0)


def test_nccl_across_processes_sets_up_with_bytes_and_sums(two_simulated_gpus):
    devices = two_simulated_gpus
    nccl = SimNccl(host_view, timeout=10)
    groups = _groups(2)
    layout = types.SimpleNamespace(
        numbers=[(1, "number")],
        groups={numpy.dtype("float32"): [(0, (2, 3), 6)], numpy.dtype("float64"): [(2, (4,), 4)]},
        sizes={numpy.dtype("float32"): 6, numpy.dtype("float64"): 4})

    def work(rank):
        device = devices[rank]
        transport = nccl_process_all_reduce.NcclAcrossProcesses(device, groups[rank], nccl)
        values = [device.asarray(numpy.full((2, 3), rank + 1.0, "float32")), 10.0 * (rank + 1),
                  device.asarray(numpy.arange(4.0) * (rank + 1))]
        totals = transport.sum(values, layout)
        host = [device.to_host(totals[0]), totals[1], device.to_host(totals[2])]
        transport.close()
        return host

    first, second = _run_ranks(work, 2)
    for result in (first, second):
        numpy.testing.assert_array_equal(result[0], numpy.full((2, 3), 3.0, "float32"))
        assert result[1] == 30.0
        numpy.testing.assert_array_equal(result[2], numpy.arange(4.0) * 3)
    assert sorted(call[1] for call in nccl.calls) == [0, 0, 1, 1]  # two dtypes, two ranks
    assert {call[5] for call in nccl.calls} == {device.stream.ptr for device in devices}


def test_nccl_all_reduce_in_one_process(two_simulated_gpus, monkeypatch):
    devices = two_simulated_gpus
    nccl = SimNccl(host_view, timeout=10)
    monkeypatch.setattr(nccl_all_reduce, "_nccl_module", lambda: nccl)
    assert [device.cuda_id for device in devices] == [0, 1]  # two GPUs: NCCL is usable
    reduce = nccl_all_reduce.NcclAllReduce(devices)

    def work(rank):
        device = devices[rank]
        arrays = [device.asarray(numpy.full(5, rank + 1.0, "float32")), 2.0, None]
        results = reduce.all_reduce(rank, arrays)
        return device.to_host(results[0]), results[1], results[2]

    for summed, number, missing in _run_ranks(work, 2):
        numpy.testing.assert_array_equal(summed, numpy.full(5, 3.0, "float32"))
        assert (number, missing) == (4.0, None)
    reduce.close()


def test_workers_sharing_a_gpu_use_mpi_not_nccl(monkeypatch):
    # On an H200, 2 and 3 MPI workers on its one GPU got NCCL_ERROR_INVALID_USAGE
    # from their first all-reduce: NCCL takes one rank per GPU.
    nccl = SimNccl(host_view, timeout=10)
    monkeypatch.setattr(nccl_process_all_reduce, "_nccl_module", lambda: nccl)
    plain = types.SimpleNamespace(cuda=types.SimpleNamespace(runtime=types.SimpleNamespace()))
    same = [types.SimpleNamespace(cuda_id=0, xp=plain) for _ in range(2)]
    groups = _groups(2)
    assert _run_ranks(lambda rank: nccl_process_all_reduce.make(same[rank], groups[rank], "auto"), 2) == [None, None]
    with pytest.raises(RuntimeError, match="one process per GPU, and some workers share a GPU"):
        _run_ranks(lambda rank: nccl_process_all_reduce.make(same[rank], groups[rank], True), 2)
    identity = nccl_process_all_reduce._gpu_identity
    assert identity(same[0]) == identity(same[1]) != identity(types.SimpleNamespace(cuda_id=1, xp=plain))
    assert identity(types.SimpleNamespace(cuda_id=None)) == 0.0
