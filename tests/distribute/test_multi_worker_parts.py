"""The multi-worker pieces that run in one process: sharding, argument
checks, the collective timeout, and a one-worker job (a communicator of size
1 needs no MPI)."""
import numpy
import pytest

import minikeras as mk
from minikeras.distribute import MpiAllReduce, MultiWorkerMirroredModel, ProcessGroup, WorkerTimeoutError, shard
from tests.distribute import multi_worker_cases as cases
from tests.distribute.helpers import assert_weights_close


class _Never:
    def Test(self):  # noqa: N802  (mpi4py's name)
        return False


class _Comm:
    """A communicator of ``size`` processes whose collectives complete at
    once when alone, and never when others would have to join."""

    def __init__(self, size=1, rank=0):
        self.size, self.rank = size, rank

    def Get_rank(self):  # noqa: N802
        return self.rank

    def Get_size(self):  # noqa: N802
        return self.size

    def Iallreduce(self, send, buffer):  # noqa: N802
        return _Never()


def test_shard_takes_strided_rows_that_rebuild_the_global_batches():
    x = numpy.arange(11)
    parts = [shard(x, 3, index) for index in range(3)]
    assert [part.tolist() for part in parts] == [[0, 3, 6, 9], [1, 4, 7, 10], [2, 5, 8]]
    # Batches of 2 per worker, side by side = one process's batches of 6.
    assert sorted(numpy.concatenate([part[:2] for part in parts]).tolist()) == list(range(6))
    xs, ys = shard((x, x * 10), 2, 1)
    assert xs.tolist() == [1, 3, 5, 7, 9] and ys.tolist() == [10, 30, 50, 70, 90]
    assert shard({"a": x}, 4, 3)["a"].tolist() == [3, 7]


@pytest.mark.parametrize("args, message", [((0, 0), "num_workers"), ((2, 2), "worker_index"),
                                           ((2, -1), "worker_index")])
def test_shard_rejects_bad_arguments(args, message):
    with pytest.raises(ValueError, match=message):
        shard(numpy.arange(4), *args)
    with pytest.raises(ValueError, match="same number of rows"):
        shard((numpy.arange(4), numpy.arange(5)), 2, 0)


def test_a_collective_times_out_with_a_clear_error():
    group = ProcessGroup(_Comm(size=2), timeout=0.2)
    with pytest.raises(WorkerTimeoutError, match="worker 0 of 2: broadcast got no answer .* within 0.2 s"):
        group.broadcast(numpy.zeros(3))


@pytest.mark.parametrize("timeout", [0, -1, "10", True])
def test_timeout_must_be_positive(timeout):
    with pytest.raises(ValueError, match="timeout must be a positive number"):
        ProcessGroup(_Comm(), timeout=timeout)


def test_bad_arguments_are_refused():
    with pytest.raises(ValueError, match="nccl must be"):
        MpiAllReduce(["cpu:0"], comm=_Comm(), nccl="yes")
    model = cases.build("dense", seed=0)
    with pytest.raises(ValueError, match="data must be 'global' or 'sharded'"):
        MultiWorkerMirroredModel(model, comm=_Comm(), data="whole")


def test_one_worker_trains_like_the_plain_model():
    config = {"model": "dense", "optimizer": "adam", "count": 30, "epochs": 2, "shuffle": True}
    weights, predict, history, evaluation = cases.single_process(config, 8)
    trainer = MultiWorkerMirroredModel(cases.build("dense", seed=100), comm=_Comm())
    assert trainer.is_chief and trainer.num_workers == 1 and trainer.worker_index == 0
    trainer.compile(cases.optimizer("adam"), cases.loss(), metrics=["accuracy"])
    x, y = cases.data("dense", 30)
    mk.random.seed(7)
    got = trainer.fit(x, y, batch_size=8, epochs=2, verbose=0)
    assert_weights_close(trainer.get_weights(), weights)
    numpy.testing.assert_allclose(got.history["loss"], history["loss"], rtol=1e-6)
    numpy.testing.assert_allclose(trainer.predict(x, batch_size=8), predict, rtol=1e-5, atol=1e-6)
    assert trainer.evaluate(x, y, batch_size=8, verbose=0, return_dict=True)["accuracy"] == evaluation["accuracy"]


class _Alone(_Comm):
    def Iallreduce(self, send, buffer):  # noqa: N802  (one process: the sum is the buffer)
        raise AssertionError("a one-process group never calls MPI")


def test_tagged_sums_reuse_their_layout_and_refuse_other_entries():
    collective = MpiAllReduce(["cpu:0"], comm=_Alone())
    first = collective.sum_across_processes([numpy.ones((2, 3), "float32"), None, 2], tag="grads")
    assert numpy.array_equal(first[0], numpy.ones((2, 3))) and first[1] is None and first[2] == 2
    again = collective.sum_across_processes([numpy.full((2, 3), 4.0, "float32"), None, 3], tag="grads")
    assert numpy.array_equal(again[0], numpy.full((2, 3), 4.0)) and again[2] == 3
    with pytest.raises(ValueError, match=r"entry 0 is \(dtype\('float32'\), \(3, 2\)\) where the first call had"):
        collective.sum_across_processes([numpy.ones((3, 2), "float32"), None, 3], tag="grads")
    with pytest.raises(ValueError, match="2 entries instead of 3"):
        collective.sum_across_processes([numpy.ones((2, 3), "float32"), None], tag="grads")


def test_tagged_sums_of_arrays_only_take_the_packed_path_and_still_check():
    collective = MpiAllReduce(["cpu:0"], comm=_Alone())
    rng = numpy.random.default_rng(0)
    shapes = [(3, 3, 1, 4), (4,), (5, 2)]
    first = [rng.standard_normal(shape).astype("float32") for shape in shapes]
    collective.sum_across_processes(first, tag="grads")
    second = [rng.standard_normal(shape).astype("float32") for shape in shapes]
    second[2] = numpy.asfortranarray(second[2])  # packed in C order all the same
    sums = collective.sum_across_processes(second, tag="grads")
    assert all(numpy.array_equal(got, want) and got.shape == want.shape for got, want in zip(sums, second))
    assert not any(numpy.shares_memory(got, given) for got, given in zip(sums, second))
    # A None entry leaves the packed path: its place sums as zeros.
    sums = collective.sum_across_processes([second[0], None, second[2]], tag="grads")
    assert numpy.array_equal(sums[1], numpy.zeros(4, "float32")) and numpy.array_equal(sums[2], second[2])
    with pytest.raises(ValueError, match=r"entry 1 is \(dtype\('float64'\), \(4,\)\) where the first call had"):
        collective.sum_across_processes([second[0], numpy.ones(4), second[2]], tag="grads")
    with pytest.raises(ValueError, match="2 entries instead of 3"):
        collective.sum_across_processes(second[:2], tag="grads")
