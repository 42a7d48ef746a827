"""The strict simulated GPU (GpuDevice on the simulated CuPy,
minikeras.testing.sim_cupy), and the GPU-path defects it exposes.

The simulated CuPy refuses what CuPy refuses, so each test below would fail
with the library's old GPU code: reading ``flags.writeable``, work outside
``Device.activate()`` (loss and metric reads, ``.numpy()``, ``.item()``,
``assign``/``set_weights``, batch-norm and embedding code, loss
reductions), ``Generator.normal``, and memory limits.
"""
import numpy
import pytest

import minikeras as mk
from minikeras import layers
from minikeras.device import registry
from minikeras.errors import ResourceExhaustedError


# -------------------------------------------------------- strict like CuPy
def test_default_device_is_the_simulated_gpu(simulated_gpu):
    assert registry.default_device() is simulated_gpu
    assert mk.tensor([1.0]).device.name == "gpu:0"
    assert [d.name for d in mk.config.list_logical_devices("GPU")] == ["gpu:0"]


def test_arrays_refuse_implicit_host_conversion(simulated_gpu):
    data = mk.tensor([1.0, 2.0]).data
    with pytest.raises(TypeError, match="Implicit conversion to a NumPy array"):
        numpy.asarray(data)
    with pytest.raises(TypeError):
        numpy.sum(data)
    with simulated_gpu.activate(), pytest.raises(TypeError, match="numpy.ndarray"):
        data + numpy.ones(2)
    numpy.testing.assert_array_equal(simulated_gpu.to_host(data), [1.0, 2.0])


def test_arrays_have_only_cupys_flags_and_attributes(simulated_gpu):
    data = mk.tensor(numpy.ones((2, 3))).data
    assert data.flags.c_contiguous and not hasattr(data.flags, "writeable")
    for missing in ("ctypes", "setflags", "resize", "__array_interface__"):
        assert not hasattr(data, missing)
    assert data.device.id == 0


def test_work_outside_activate_is_refused(simulated_gpu):
    data = mk.tensor([1.0, 2.0]).data
    with pytest.raises(RuntimeError, match="outside any device's activate"):
        data * 2.0
    with pytest.raises(RuntimeError, match="outside any device's activate"):
        simulated_gpu.xp.zeros(3)
    with pytest.raises(RuntimeError, match="outside any device's activate"):
        data.get()
    with simulated_gpu.activate():
        doubled = data * 2.0
    assert simulated_gpu.is_array(doubled)


def test_host_reads_and_uploads_are_counted(simulated_gpu):
    stats = simulated_gpu.stats
    x = mk.tensor(numpy.arange(4.0))
    before = stats.snapshot()
    total = x.sum()
    assert stats.host_traffic() == {name: before[name] for name in stats.HOST_TRAFFIC}  # an op: no host traffic
    assert stats.kernel_launches == before["kernel_launches"] + 1  # one reduction kernel
    assert total.item() == 6.0
    assert float(total) == 6.0
    x.numpy()
    assert stats.host_syncs == before["host_syncs"] + 3
    mk.tensor(numpy.ones(3))
    assert stats.uploads == before["uploads"] + 1



def test_user_ids_are_read_back_once_and_computed_ones_not_at_all(simulated_gpu):
    """CuPy wraps out-of-range ids (sim_cupy/_indexing.py): an op
    reads the bounds of ids it is given (one host sync) but not of ids it
    computed itself (pixel positions, a permutation, a roll's or top_k's ids)."""
    from minikeras import ops

    stats = simulated_gpu.stats
    images = mk.tensor(numpy.arange(2 * 4 * 4 * 1, dtype="float32").reshape(2, 4, 4, 1))
    before = stats.host_syncs
    ops.take(images, numpy.array([1, 0]), axis=0)
    assert stats.host_syncs == before + 1
    ops.image.map_coordinates(images[0, :, :, 0], numpy.full((2, 3, 3), 1.5, "float32"), order=1)
    mk.random.shuffle(images, seed=1)
    ops.roll(images, 1, axis=1)
    ops.top_k(images[0, 0, :, 0], 2)
    ops.correlate(images[0, 0, :, 0], images[1, 0, :2, 0])
    ops.unfold(ops.transpose(images, (0, 3, 1, 2)), 2)
    assert stats.host_syncs == before + 1

# ------------------------------------------------------ the review defects
def test_layers_with_weights_build_on_the_gpu(simulated_gpu):
    # layers/base.py used to read value.flags.writeable, which CuPy lacks.
    layer = layers.Dense(3)
    out = layer(mk.tensor(numpy.ones((2, 4), "float32")))
    assert out.shape == (2, 3) and layer.kernel.device is simulated_gpu
    assert simulated_gpu.is_array(layer.kernel.data)


def test_host_reads_assign_and_set_weights_run_in_the_device_context(simulated_gpu):
    layer = layers.Dense(2, use_bias=False)
    layer.build((None, 2))
    layer.set_weights([numpy.eye(2, dtype="float32")])
    layer.kernel.assign(numpy.full((2, 2), 3.0, "float32"))
    numpy.testing.assert_array_equal(layer.get_weights()[0], numpy.full((2, 2), 3.0))
    assert layer.kernel.sum().item() == 12.0
    repr(layer.kernel)


def test_fit_evaluate_predict_with_batch_norm_embedding_and_weighted_losses(simulated_gpu):
    mk.random.seed(0)
    rng = numpy.random.default_rng(0)
    ids = rng.integers(0, 20, (64, 5))
    labels = (ids.sum(axis=1) % 3).astype("int64")
    model = mk.Sequential([layers.Input((5,)), layers.Embedding(20, 8), layers.Flatten(),
                           layers.BatchNormalization(), layers.Dropout(0.1, seed=1), layers.Dense(3)])
    loss = mk.losses.SparseCategoricalCrossentropy(from_logits=True, ignore_class=2,
                                                   reduction="mean_with_sample_weight")
    model.compile("adam", loss, metrics=["accuracy"])
    weights = rng.uniform(0.5, 1.5, 64).astype("float32")
    history = model.fit(ids, labels, sample_weight=weights, batch_size=16, epochs=2, verbose=0)
    assert numpy.isfinite(history.history["loss"]).all()
    results = model.evaluate(ids, labels, verbose=0)
    assert numpy.isfinite(results).all()
    predictions = model.predict(ids, verbose=0)
    assert isinstance(predictions, numpy.ndarray) and predictions.shape == (64, 3)
    assert all(w.device is simulated_gpu for w in model.weights)


def test_normal_draws_with_what_cupys_generator_has(simulated_gpu):
    generator = mk.random.generator(simulated_gpu)
    assert not hasattr(generator, "normal")  # cupy.random.Generator has no normal()
    samples = mk.random.normal((20_000,), mean=2.0, stddev=3.0).numpy()
    assert abs(samples.mean() - 2.0) < 0.1 and abs(samples.std() - 3.0) < 0.1
    uniform = mk.random.uniform((20_000,), minval=-1.0, maxval=1.0).numpy()
    assert uniform.min() >= -1.0 and uniform.max() < 1.0


def test_memory_limit_is_resource_exhausted(simulated_gpu):
    kept = mk.tensor(numpy.ones(1000, "float32"))
    mk.config.set_memory_limit("gpu:0", mk.config.get_memory_info("gpu:0")["current"] + 1000)
    with pytest.raises(ResourceExhaustedError, match="GPU:0"):
        kept * 2.0
    mk.config.set_memory_limit("gpu:0", None)
    assert (kept * 2.0).shape == (1000,)


def test_copies_between_simulated_gpus_and_back_to_the_cpu(simulated_gpus):
    simulated_gpus("2")
    x = mk.tensor([1.0, 2.0], device="gpu:0", requires_grad=True)
    y = x.to("gpu:1")
    assert y.device.name == "gpu:1" and registry.get_device("gpu:1").stats.device_copies == 1
    assert y.data.device.id == 1
    (y * y).sum().backward()
    numpy.testing.assert_array_equal(x.grad.numpy(), [2.0, 4.0])
    numpy.testing.assert_array_equal(x.cpu().numpy(), [1.0, 2.0])
