"""The all-reduce collectives: local copies, NCCL selection, MPI (with a
stand-in communicator), and training across two 'processes'."""
import threading

import numpy
import pytest

import minikeras as mk
from minikeras import config
from minikeras.distribute import (AllReduce, LocalAllReduce, MpiAllReduce, MultiWorkerMirroredModel, NcclAllReduce,
                                  ReplicaAborted)
from minikeras.distribute import default_all_reduce, nccl_all_reduce
from tests.distribute.helpers import assert_weights_close, classification_data, dense_model, logits_loss, twin


def _run_ranks(collective, contributions, timeout=10):
    """Call ``collective.all_reduce`` from one thread per rank."""
    results, errors = [None] * len(contributions), [None] * len(contributions)

    def work(rank):
        try:
            results[rank] = collective.all_reduce(rank, contributions[rank])
        except BaseException as error:  # reported to the test
            errors[rank] = error

    threads = [threading.Thread(target=work, args=(rank,)) for rank in range(len(contributions))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout)
        assert not thread.is_alive(), "a replica hung in the collective"
    return results, errors


@pytest.mark.parametrize("serial_bytes", [LocalAllReduce.serial_bytes, 0], ids=["one_adder", "reduce_scatter"])
def test_local_all_reduce_sums_in_rank_order(split_cpu, serial_bytes):
    devices = split_cpu(3)
    collective = LocalAllReduce(devices)
    collective.serial_bytes = serial_bytes
    rng = numpy.random.default_rng(0)
    arrays = [[rng.normal(size=(5, 4)).astype("float32"), rng.normal(size=7)] for _ in range(3)]
    for rounds in range(2):  # reusable
        results, errors = _run_ranks(collective, [a + [rank + 1] for rank, a in enumerate(arrays)])
        assert errors == [None] * 3
        for index in range(2):
            expected = (arrays[0][index] + arrays[1][index]) + arrays[2][index]
            for result in results:
                assert numpy.array_equal(result[index], expected)  # bit for bit, on every rank
                assert result[index].dtype == arrays[0][index].dtype
        assert [result[2] for result in results] == [6, 6, 6]


def test_none_contributes_nothing(split_cpu):
    devices = split_cpu(3)
    collective = LocalAllReduce(devices)
    a, b = numpy.ones(3, "float32"), numpy.full(3, 2.0, "float32")
    results, errors = _run_ranks(collective, [[a, None], [b, None], [None, None]])
    assert errors == [None] * 3
    for result in results:
        assert numpy.array_equal(result[0], a + b) and result[1] is None
    # A single contribution is copied, never handed out as the caller's own array.
    results, _ = _run_ranks(collective, [[a], [None], [None]])
    assert numpy.array_equal(results[1][0], a) and results[1][0] is not a


@pytest.mark.parametrize("serial_bytes", [LocalAllReduce.serial_bytes, 0], ids=["one_adder", "reduce_scatter"])
def test_sums_are_counted_and_released(split_cpu, serial_bytes):
    devices = split_cpu(2)
    collective = LocalAllReduce(devices)
    collective.serial_bytes = serial_bytes
    big = [numpy.ones(1000, "float32"), numpy.ones(1000, "float32")]
    before = [config.get_memory_info(d)["current"] for d in devices]
    results, _ = _run_ranks(collective, [big, big])
    during = [config.get_memory_info(d)["current"] - b for d, b in zip(devices, before)]
    assert sorted(during) == [4000, 4000]  # one sum reduced by each rank (balanced)
    del results
    assert [config.get_memory_info(d)["current"] for d in devices] == before


def test_abort_releases_waiting_replicas(split_cpu):
    devices = split_cpu(2)
    collective = LocalAllReduce(devices)
    caught = []

    def waiting():
        try:
            collective.all_reduce(0, [numpy.ones(2)])
        except ReplicaAborted as error:
            caught.append(error)

    thread = threading.Thread(target=waiting)
    thread.start()
    collective.abort()
    thread.join(5)
    assert not thread.is_alive() and len(caught) == 1
    collective.reset()
    results, errors = _run_ranks(collective, [[numpy.ones(2)], [numpy.ones(2)]])
    assert errors == [None, None] and numpy.array_equal(results[0][0], [2.0, 2.0])


def test_mismatched_contributions_are_an_error(split_cpu):
    devices = split_cpu(2)
    collective = LocalAllReduce(devices)
    _, errors = _run_ranks(collective, [[numpy.ones(2)], [numpy.ones(2), numpy.ones(2)]])
    assert any(isinstance(e, ValueError) and "different numbers" in str(e) for e in errors)
    assert all(e is not None for e in errors)


def test_single_device_passes_through(split_cpu):
    devices = split_cpu(1)
    array = numpy.ones(3)
    assert LocalAllReduce(devices).all_reduce(0, [array])[0] is array


def test_base_class_and_empty_devices(split_cpu):
    devices = split_cpu(1)
    with pytest.raises(NotImplementedError):
        AllReduce(devices).all_reduce(0, [])
    with pytest.raises(ValueError, match="at least one device"):
        LocalAllReduce([])


def test_nccl_is_not_chosen_without_gpus(split_cpu):
    devices = split_cpu(2)
    assert not nccl_all_reduce.usable(devices)
    assert isinstance(default_all_reduce(devices), LocalAllReduce)
    with pytest.raises(RuntimeError, match="NcclAllReduce needs"):
        NcclAllReduce(devices)


class _FakeWorld:
    """In-process stand-in for MPI: 'processes' are threads."""

    def __init__(self, size):
        self.size = size
        self.barrier = threading.Barrier(size, timeout=20)
        self.gathered = [None] * size
        self.buffers = [None] * size


class _Done:
    def Test(self):  # noqa: N802
        return True


class _FakeComm:
    """The three mpi4py methods ProcessGroup uses (blocking, in threads)."""

    def __init__(self, world, rank):
        self.world, self.rank = world, rank

    def Get_rank(self):  # noqa: N802  (mpi4py's names)
        return self.rank

    def Get_size(self):  # noqa: N802
        return self.world.size

    def Iallreduce(self, send, buffer):  # noqa: N802  (always in place here)
        self.world.buffers[self.rank] = buffer.copy()
        self.world.barrier.wait()
        total = self.world.buffers[0].copy()
        for other in self.world.buffers[1:]:
            total += other
        buffer[...] = total
        self.world.barrier.wait()
        return _Done()


def test_mpi_all_reduce_sums_across_processes(split_cpu):
    devices = split_cpu(4)
    world = _FakeWorld(2)
    # Process 0 has replicas on cpu:0 and cpu:1, process 1 on cpu:2 and cpu:3.
    collectives = [MpiAllReduce(devices[:2], comm=_FakeComm(world, 0)),
                   MpiAllReduce(devices[2:], comm=_FakeComm(world, 1))]
    assert [c.process_index for c in collectives] == [0, 1] and collectives[1].process_count == 2
    outputs = {}

    def process(index):
        contributions = [[numpy.full(3, 1.0 + 2 * index + rank, "float32"), None if index else 5]
                         for rank in range(2)]
        outputs[index] = _run_ranks(collectives[index], contributions)

    threads = [threading.Thread(target=process, args=(index,)) for index in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    for index in range(2):
        results, errors = outputs[index]
        assert errors == [None, None]
        for result in results:
            assert numpy.array_equal(result[0], numpy.full(3, 1.0 + 2.0 + 3.0 + 4.0))
            assert result[1] == 10


def test_mpi_requires_mpi4py_or_a_communicator(split_cpu, monkeypatch):
    devices = split_cpu(1)
    import builtins

    real_import = builtins.__import__

    def no_mpi(name, *args, **kwargs):
        if name.startswith("mpi4py"):
            raise ImportError("no mpi4py here")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_mpi)
    with pytest.raises(ImportError, match="mpi4py"):
        MpiAllReduce(devices)


def test_multi_worker_training_across_two_processes_matches_one_device(split_cpu):
    # The first step (accuracy as a metric) in two stand-in
    # processes, the second starting from other weights (broadcast).
    split_cpu(2)
    world = _FakeWorld(2)
    x, y = classification_data((8,), 30)
    single, first = twin(dense_model)
    second = dense_model(seed=5)
    single.compile("adam", logits_loss(), metrics=["accuracy"])
    expected = single.fit(x, y, batch_size=7, epochs=2, shuffle=False, verbose=0).history
    trained = {}

    def process(index, model, device):
        trainer = MultiWorkerMirroredModel(model, devices=[device], comm=_FakeComm(world, index),
                                           abort_on_error=False)
        trainer.compile("adam", logits_loss(), metrics=["accuracy"])
        history = trainer.fit(x, y, batch_size=7, epochs=2, shuffle=False, verbose=0).history
        trained[index] = trainer.get_weights(), history

    threads = [threading.Thread(target=process, args=(0, first, "cpu:0")),
               threading.Thread(target=process, args=(1, second, "cpu:1"))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert sorted(trained) == [0, 1]
    assert_weights_close(trained[0][0], single.get_weights())
    for a, b in zip(trained[0][0], trained[1][0]):
        assert numpy.array_equal(a, b)
    assert trained[0][1] == trained[1][1]
    assert trained[0][1]["accuracy"] == expected["accuracy"]
    numpy.testing.assert_allclose(trained[0][1]["loss"], expected["loss"], rtol=1e-6)


def test_mirrored_model_refuses_an_all_reduce_across_processes(split_cpu):
    split_cpu(1)
    collective = MpiAllReduce(["cpu:0"], comm=_FakeComm(_FakeWorld(2), 0))
    with pytest.raises(ValueError, match="spans 2 processes; use minikeras.distribute.MultiWorkerMirroredModel"):
        mk.MirroredModel(dense_model(), devices=["cpu:0"], all_reduce=collective)


@pytest.mark.gpu
def test_local_all_reduce_on_two_logical_gpus(fresh_devices):
    gpu = config.list_physical_devices("GPU")[0]
    config.set_logical_device_configuration(gpu, [config.LogicalDeviceConfiguration(memory_limit=256)] * 2)
    devices = config.list_logical_devices("GPU")
    assert not nccl_all_reduce.usable(devices)  # one physical GPU: NCCL refuses two ranks on it
    collective = default_all_reduce(devices)
    cupy = devices[0].xp
    contributions = []
    for rank, device in enumerate(devices):
        with mk.device(device):
            contributions.append([cupy.full(1000, rank + 1.0, dtype=cupy.float32), None])
    results, errors = _run_ranks(collective, contributions)
    assert errors == [None, None]
    for device, result in zip(devices, results):
        assert float(device.to_host(result[0]).sum()) == 3000.0 and result[1] is None
