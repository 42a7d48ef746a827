"""Kernel launches counted on the strict simulated GPU (``device.stats``):
one per call that computes, none for views, metadata or bare allocations,
as CuPy launches them."""
import numpy


def _launches(device, work):
    before = device.stats.kernel_launches
    with device.activate():
        work(device.xp)
    return device.stats.kernel_launches - before


def test_each_computing_call_is_one_launch(simulated_gpu):
    with simulated_gpu.activate():
        a = simulated_gpu.asarray(numpy.arange(12.0).reshape(3, 4))
        b = simulated_gpu.xp.empty((3, 4))
    assert _launches(simulated_gpu, lambda xp: a + 1.0) == 1
    assert _launches(simulated_gpu, lambda xp: xp.exp(a)) == 1
    assert _launches(simulated_gpu, lambda xp: a.sum(axis=0)) == 1
    assert _launches(simulated_gpu, lambda xp: a.sum()) == 1  # a 0-d result is still computed on the device
    assert _launches(simulated_gpu, lambda xp: xp.multiply(a, 2.0, out=b)) == 1
    assert _launches(simulated_gpu, lambda xp: b.__iadd__(a)) == 1
    assert _launches(simulated_gpu, lambda xp: b.fill(0)) == 1
    assert _launches(simulated_gpu, lambda xp: b.__setitem__((slice(None), 0), 1.0)) == 1
    assert _launches(simulated_gpu, lambda xp: xp.zeros((2, 2))) == 1  # a memset
    assert _launches(simulated_gpu, lambda xp: a[[0, 2]]) == 1  # fancy indexing gathers
    assert _launches(simulated_gpu, lambda xp: a.T.reshape(12)) == 1  # a non-contiguous reshape copies
    assert _launches(simulated_gpu, lambda xp: xp.add.at(b, [0, 0], a[0])) == 1
    assert _launches(simulated_gpu, lambda xp: xp.copyto(b, a)) == 1


def test_views_metadata_and_allocations_launch_nothing(simulated_gpu):
    with simulated_gpu.activate():
        a = simulated_gpu.asarray(numpy.arange(12.0).reshape(3, 4))
    for work in (lambda xp: a.reshape(4, 3), lambda xp: a.T, lambda xp: a[1:], lambda xp: a[None],
                 lambda xp: xp.expand_dims(a, 0), lambda xp: xp.broadcast_to(a[0], (5, 4)),
                 lambda xp: a.astype(a.dtype, copy=False), lambda xp: xp.empty((100,)),
                 lambda xp: xp.empty_like(a), lambda xp: xp.result_type(a, 1.0), lambda xp: xp.asarray(a)):
        assert _launches(simulated_gpu, work) == 0


def test_uploads_are_not_kernels_and_random_draws_are(simulated_gpu):
    stats = simulated_gpu.stats
    before = stats.snapshot()
    with simulated_gpu.activate():
        simulated_gpu.asarray(numpy.ones(3))
        simulated_gpu.uniform(simulated_gpu.new_rng(0), (4,), 0.0, 1.0)
    after = stats.snapshot()
    assert after["uploads"] - before["uploads"] == 1
    assert after["kernel_launches"] - before["kernel_launches"] == 3  # draw, scale, shift
