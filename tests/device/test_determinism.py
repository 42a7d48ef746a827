"""Op determinism as TensorFlow (device/determinism.py), on the strict
simulated GPU: by default floating scatter-adds are CuPy's atomic ``add.at``
(the simulation adds in a permuted order drawn per call, as atomics land),
so two identical runs of an embedding model differ in their last bits;
after ``enable_op_determinism()`` they are bit-identical, and both stay
within float tolerance of the CPU."""
import numpy
import pytest

import minikeras as mk
from minikeras.device import determinism, scatter


@pytest.fixture
def deterministic():
    determinism._set_for_tests(True)
    yield
    determinism._set_for_tests(False)


def test_tensorflows_name_and_default():
    assert not determinism.enabled()  # TensorFlow's default: fast algorithms
    assert mk.config.experimental.enable_op_determinism is determinism.enable_op_determinism
    assert not hasattr(mk.config.experimental, "disable_op_determinism")  # private in TensorFlow too
    try:
        mk.config.experimental.enable_op_determinism()
        assert determinism.enabled()
    finally:
        determinism._set_for_tests(False)


def _embedding_run(device_name, seed=3):
    """Weights after three steps of an Embedding model whose batches repeat
    a few ids many times (many atomic adds into the same rows)."""
    mk.utils.set_random_seed(seed)
    data = numpy.random.default_rng(seed)
    ids = data.integers(0, 5, size=(96, 24))
    targets = data.standard_normal((96, 1)).astype("float32")
    with mk.device(device_name):
        model = mk.Sequential([mk.layers.Input((24,), dtype="int32"), mk.layers.Embedding(5, 8),
                               mk.layers.GlobalAveragePooling1D(), mk.layers.Dense(1)])
        model.compile(optimizer=mk.optimizers.SGD(0.5), loss="mse")
        for step in range(3):
            model.train_on_batch(ids[step * 32:(step + 1) * 32], targets[step * 32:(step + 1) * 32])
        return [w.numpy() for w in model.weights]


def test_atomic_scatter_adds_differ_run_to_run_by_default(simulated_gpu):
    first, second = _embedding_run("gpu:0"), _embedding_run("gpu:0")
    cpu = _embedding_run("cpu:0")
    assert not numpy.array_equal(first[0], second[0])  # the embedding table's gradient is a scatter-add
    for got in (first, second):
        for w, want in zip(got, cpu):
            numpy.testing.assert_allclose(w, want, rtol=1e-5, atol=1e-6)


def test_op_determinism_gives_bit_identical_weights(simulated_gpu, deterministic):
    first, second = _embedding_run("gpu:0"), _embedding_run("gpu:0")
    for a, b, want in zip(first, second, _embedding_run("cpu:0")):
        assert numpy.array_equal(a, b)
        numpy.testing.assert_allclose(a, want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("dtype", ["float32", "float16", "float64", "complex64"])
def test_the_deterministic_scatter_add_matches_numpy(simulated_gpu, deterministic, dtype, rng):
    xp = simulated_gpu.xp
    target = (rng.standard_normal((7, 3)) * (1 + 1j if dtype.startswith("complex") else 1)).astype(dtype)
    indices = rng.integers(-7, 7, size=40)
    values = (rng.standard_normal((40, 3))).astype(dtype)
    want = target.astype("complex128" if dtype.startswith("complex") else "float64")
    numpy.add.at(want, indices, values)
    with simulated_gpu.activate():
        got = xp.asarray(target)
        calls = simulated_gpu.stats.kernel_launches
        scatter.scatter_add(xp, got, xp.asarray(indices), xp.asarray(values))
        assert simulated_gpu.stats.kernel_launches > calls
        got = simulated_gpu.to_host(got)
    tolerance = 2e-3 if dtype == "float16" else 1e-5
    numpy.testing.assert_allclose(got, want, rtol=tolerance, atol=tolerance)


def test_the_deterministic_scatter_add_takes_several_index_arrays(simulated_gpu, deterministic, rng):
    xp = simulated_gpu.xp
    rows, cols = rng.integers(0, 4, size=30), rng.integers(0, 5, size=30)
    values = rng.standard_normal(30).astype("float32")
    want = numpy.zeros((4, 5, 2), "float32")
    numpy.add.at(want, (rows, cols), values[:, None])
    with simulated_gpu.activate():
        got = xp.zeros((4, 5, 2), "float32")
        scatter.scatter_add(xp, got, (xp.asarray(rows), xp.asarray(cols)), xp.asarray(values)[:, None])
        got = simulated_gpu.to_host(got)
    numpy.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


def test_the_simulated_atomics_permute_only_floating_sums(simulated_gpu):
    xp = simulated_gpu.xp
    values = numpy.random.default_rng(0).standard_normal(4000).astype("float32") * 1e3
    with simulated_gpu.activate():
        sums = []
        for _ in range(2):
            target = xp.zeros(2, "float32")
            xp.add.at(target, xp.asarray(numpy.arange(4000) % 2), xp.asarray(values))
            sums.append(simulated_gpu.to_host(target))
        counts = xp.zeros(2, "int64")
        xp.add.at(counts, xp.asarray(numpy.arange(4000) % 2), 3)
        assert simulated_gpu.to_host(counts).tolist() == [6000, 6000]
    assert not numpy.array_equal(sums[0], sums[1])
    numpy.testing.assert_allclose(sums[0], sums[1], rtol=1e-4)
