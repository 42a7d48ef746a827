"""The multi-tensor plan (kernels/multi_tensor.py): which tensors and chunks each
launch's table holds. Every element is covered by exactly one block, tables
never overflow, and the launch counts of the models the issue names stay small."""
import math

import numpy
import pytest

from minikeras.kernels import multi_tensor
from tests.kernels.cuda_tools import device_arrays, harness_device


def _covered(plan, sizes):
    """Per tensor, how many times each element is covered by some block of some launch."""
    counts = [numpy.zeros(size, numpy.int64) for size in sizes]
    for tensors, table, blocks in plan.launches:
        assert len(tensors) <= multi_tensor.TENSORS
        assert blocks <= table.dtype["chunk_of_block"].shape[0]
        assert list(table["size"][0, :len(tensors)]) == [sizes[t] for t in tensors]
        for b in range(blocks):
            slot, chunk = int(table["tensor_of_block"][0, b]), int(table["chunk_of_block"][0, b])
            assert slot < len(tensors)
            start = chunk * plan.chunk
            assert start < sizes[tensors[slot]]  # no empty block
            counts[tensors[slot]][start:start + plan.chunk] += 1
        assert not table["address"].any()  # filled per call, never in the kept plan
    return counts


@pytest.mark.parametrize("depth", [1, 3, 5])
@pytest.mark.parametrize("seed", range(4))
def test_every_element_is_covered_by_exactly_one_block(depth, seed):
    rng = numpy.random.default_rng(seed)
    sizes = [int(s) for s in rng.choice([0, 1, 3, 64, 2047, 2048, 2049, 9000, 70000, 300001], size=rng.integers(1, 90))]
    plan = multi_tensor.Plan(tuple(sizes), depth)
    assert plan.chunk % multi_tensor.CHUNK_MIN == 0  # chunks start 16-byte aligned
    for count in _covered(plan, sizes):
        assert (count == 1).all()


def test_a_small_model_is_one_launch_and_resnet50_a_few():
    """CIFAR's CNN (12 variables, ~0.66M parameters): one launch of 2048-element chunks; ResNet-50's
    214 variables (25.6M): launches set by the 32-tensor tables, the chunk grown to keep blocks within them."""
    cifar = [864, 32, 9216, 32, 18432, 64, 36864, 64, 589824, 256, 2560, 10]
    plan = multi_tensor.Plan(tuple(cifar), 5)
    assert (plan.chunk, len(plan.launches)) == (2048, 1)
    assert plan.launches[0][2] == sum(math.ceil(size / 2048) for size in cifar)

    convolutions = [3 * 3 * 64 * 64] * 40 + [1 * 1 * 256 * 512] * 50 + [3 * 3 * 512 * 512] * 10  # ResNet-like
    sizes = tuple(size for conv in convolutions for size in (conv, 64, 64))[:214]
    total = sum(sizes)
    plan = multi_tensor.Plan(sizes, 5)
    capacity = multi_tensor.table_struct(5).dtype["chunk_of_block"].shape[0]
    assert len(plan.launches) <= math.ceil(len(sizes) / multi_tensor.TENSORS) + math.ceil(
        sum(math.ceil(s / plan.chunk) for s in sizes) / capacity)
    assert total / plan.chunk <= 2 * math.ceil(len(sizes) / multi_tensor.TENSORS) * capacity


def test_plans_are_kept_per_list_of_sizes():
    multi_tensor.plan.cache_clear()
    first = multi_tensor.plan((10, 20), 5)
    assert multi_tensor.plan((10, 20), 5) is first
    assert multi_tensor.plan((10, 20), 3) is not first


class _RecordingLauncher:
    """A launcher that keeps each launch's table instead of running it."""

    def __init__(self):
        self.tables = []

    def check(self, *dtypes):
        pass

    def run(self, dtype, grid, block, arguments):
        self.tables.append(arguments[0])


def _launch_all(arrays):
    launcher = _RecordingLauncher()
    groups = [(weights, gradient) for weights, gradient in arrays]
    multi_tensor.launch_all(launcher, harness_device(), groups, lambda group: group,
                            lambda scalar: (scalar(0.5),))
    return launcher.tables


def test_a_step_over_the_same_arrays_reuses_the_filled_tables():
    arrays = [device_arrays(numpy.ones(size, "float32"), numpy.ones(size, "float32")) for size in (10, 3000, 7)]
    first = _launch_all(arrays)
    hits = multi_tensor.filled_tables.cache_info().hits
    second = _launch_all(arrays)
    assert multi_tensor.filled_tables.cache_info().hits == hits + 1
    assert len(second) == 1 and second[0] is first[0]  # no table rebuilt
    assert not second[0].flags.writeable  # shared between calls: never written
    expected = [[weights.data.ptr, gradient.data.ptr] for weights, gradient in arrays]
    assert second[0]["address"][0, :, :3].T.tolist() == expected
    assert second[0]["size"][0, :3].tolist() == [10, 3000, 7]

    moved = [device_arrays(numpy.ones(size, "float32"), numpy.ones(size, "float32")) for size in (10, 3000, 7)]
    third = _launch_all(moved)  # other arrays (a new gradient): their addresses, in a table of their own
    assert third[0] is not first[0]
    assert third[0]["address"][0, :, :3].T.tolist() == [[w.data.ptr, g.data.ptr] for w, g in moved]
