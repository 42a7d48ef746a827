"""Issue 25's activations, STFT initializer, OrthogonalRegularizer and
keras.random draws: values recorded from Keras 3.15, float64 gradients,
names and configs, seeded reproducibility and the distributions' moments."""
import json

import numpy
import pytest

import minikeras as mk
from minikeras import activations, initializers, regularizers
from minikeras.autograd import gradcheck
from tests.keras_blocks_misc_cases import (
    ACTIVATIONS, FIXTURE, REGULARIZER_CASES, SPARSEMAX_INPUT, STFT_CASES,
)


@pytest.fixture(scope="module")
def recorded():
    with numpy.load(FIXTURE) as data:
        return dict(data)


# ---------------------------------------------------------------- activations
@pytest.mark.parametrize("case", sorted(ACTIVATIONS))
def test_activation_matches_keras(recorded, case):
    name, kwargs = ACTIVATIONS[case]
    out = activations.get(name)(mk.tensor(recorded["input/x"]), **kwargs)
    assert out.dtype == numpy.float32
    numpy.testing.assert_allclose(out.numpy(), recorded[f"activation/{case}"], rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("case", sorted(ACTIVATIONS))
def test_activation_gradients_float64(recorded, case):
    name, kwargs = ACTIVATIONS[case]
    x = recorded["input/x"].astype(numpy.float64)
    # Keep finite differences away from the kinks at +-1, +-threshold.
    x = numpy.where(numpy.abs(numpy.abs(x) - 1.0) < 0.05, x + 0.1, x)
    x = numpy.where(numpy.abs(numpy.abs(x) - 0.5) < 0.05, x + 0.1, x)
    x = numpy.where(numpy.abs(x - 0.3) < 0.05, x + 0.1, x)
    tensor = mk.Tensor(x, requires_grad=True)
    assert gradcheck(lambda t: activations.get(name)(t, **kwargs), [tensor])


def test_sparsemax_matches_keras_where_keras_is_exact(recorded):
    out = activations.sparsemax(mk.tensor(SPARSEMAX_INPUT)).numpy()
    numpy.testing.assert_allclose(out, recorded["activation/sparsemax"], rtol=1e-6, atol=1e-7)


def test_sparsemax_is_a_projection_onto_the_simplex(rng):
    x = rng.normal(size=(5, 7)).astype("float32") * 0.3
    out = activations.sparsemax(mk.tensor(x), axis=0).numpy()
    numpy.testing.assert_allclose(out.sum(axis=0), 1.0, rtol=1e-6)
    assert (out >= 0).all()
    # Against the sort-free definition: tau solves sum(max(x - tau, 0)) = 1.
    for column in range(7):
        values = x[:, column].astype(numpy.float64)
        low, high = values.min() - 1, values.max()
        for _ in range(100):
            tau = (low + high) / 2
            low, high = (tau, high) if numpy.maximum(values - tau, 0).sum() > 1 else (low, tau)
        numpy.testing.assert_allclose(out[:, column], numpy.maximum(values - tau, 0), atol=1e-6)
    tensor = mk.Tensor(rng.normal(size=(3, 6)), requires_grad=True)
    assert gradcheck(lambda t: activations.sparsemax(t) * mk.tensor(numpy.arange(6.0)), [tensor])


def test_new_activations_serialize_and_work_in_layers():
    for name in ("celu", "glu", "hard_shrink", "hard_tanh", "soft_shrink", "sparse_plus", "sparse_sigmoid",
                 "sparsemax", "squareplus", "tanh_shrink"):
        assert activations.serialize(activations.get(name)) == name
    layer = mk.layers.Dense(4, activation="squareplus")
    clone = mk.layers.Dense.from_config(layer.get_config())
    assert clone.activation is activations.squareplus
    assert mk.layers.Activation("tanh_shrink")(mk.tensor(numpy.ones((2, 3), "float32"))).shape == (2, 3)
    with pytest.raises(ValueError, match="divisible by 2"):
        activations.glu(mk.tensor(numpy.ones((2, 3), "float32")))


# ------------------------------------------------------ initializers, regularizer
@pytest.mark.parametrize("case", sorted(STFT_CASES))
def test_stft_initializer_matches_keras(recorded, case):
    kwargs, shape = STFT_CASES[case]
    initializer = initializers.STFT(**kwargs)
    numpy.testing.assert_allclose(initializer(shape), recorded[f"stft/{case}"], rtol=1e-5, atol=1e-6)
    with open(FIXTURE.replace(".npz", "_configs.json")) as handle:
        assert initializer.get_config() == json.load(handle)[case]
    clone = initializers.deserialize(initializers.serialize(initializer))
    numpy.testing.assert_array_equal(clone(shape), initializer(shape))


def test_initializer_aliases():
    assert initializers.IdentityInitializer is initializers.Identity
    assert initializers.OrthogonalInitializer is initializers.Orthogonal
    assert initializers.STFTInitializer is initializers.STFT and initializers.stft is initializers.STFT
    assert isinstance(initializers.get("stft"), initializers.STFT)
    with pytest.raises(ValueError, match="side"):
        initializers.STFT(side="both")
    with pytest.raises(ValueError, match="Unknown window"):
        initializers.STFT(window="kaiser-ish")


@pytest.mark.parametrize("case", sorted(REGULARIZER_CASES))
def test_orthogonal_regularizer_matches_keras(recorded, case):
    regularizer = regularizers.OrthogonalRegularizer(**REGULARIZER_CASES[case])
    kernel = recorded["input/kernel"]
    numpy.testing.assert_allclose(regularizer(mk.tensor(kernel)).numpy(), recorded[f"orthogonal/{case}"], rtol=1e-5)
    assert gradcheck(regularizer, [mk.Tensor(kernel.astype(numpy.float64), requires_grad=True)])
    clone = regularizers.deserialize(regularizers.serialize(regularizer))
    assert clone.get_config() == regularizer.get_config()
    assert regularizers.get("orthogonal_regularizer").get_config() == {"factor": 0.01, "mode": "rows"}
    with pytest.raises(ValueError, match="rank 2"):
        regularizer(mk.tensor(numpy.ones((2, 2, 2), "float32")))


def test_orthogonal_regularizer_zero_on_orthogonal_rows():
    rows = numpy.linalg.qr(numpy.random.default_rng(0).normal(size=(6, 6)))[0][:3]
    assert abs(regularizers.OrthogonalRegularizer(1.0)(mk.tensor(rows)).item()) < 1e-7


# ---------------------------------------------------------------- keras.random
DRAWS = {
    "gamma": (lambda seed: mk.random.gamma((20000,), 2.5, seed=seed), 2.5, 2.5),
    "beta": (lambda seed: mk.random.beta((20000,), 2.0, 3.0, seed=seed), 0.4, 0.04),
    "binomial": (lambda seed: mk.random.binomial((20000,), 10, 0.3, seed=seed), 3.0, 2.1),
    "truncated_normal": (lambda seed: mk.random.truncated_normal((20000,), 1.0, 2.0, seed=seed), 1.0,
                         4.0 * 0.7737413),  # variance of N(0,1) truncated at +-2 is 0.7737
}


@pytest.mark.parametrize("name", sorted(DRAWS))
def test_random_draws_have_their_moments_and_are_seeded(name):
    draw, mean, variance = DRAWS[name]
    values = draw(7)
    assert values.dtype == numpy.float32 and values.shape == (20000,)
    data = values.numpy().astype(numpy.float64)
    assert abs(data.mean() - mean) < 4 * numpy.sqrt(variance / 20000)
    assert abs(data.var() / variance - 1) < 0.05
    numpy.testing.assert_array_equal(draw(7).numpy(), values.numpy())
    generator = mk.random.SeedGenerator(3)
    first, second = draw(generator).numpy(), draw(generator).numpy()
    assert not numpy.array_equal(first, second)
    generator = mk.random.SeedGenerator(3)
    numpy.testing.assert_array_equal(draw(generator).numpy(), first)


def test_truncated_normal_stays_within_two_stddev():
    values = mk.random.truncated_normal((5000,), mean=-1.0, stddev=0.5, seed=1).numpy()
    assert values.min() >= -2.0 and values.max() <= 0.0


def test_categorical_follows_the_logits():
    probabilities = numpy.array([[0.1, 0.6, 0.3], [0.7, 0.0, 0.3]])
    with numpy.errstate(divide="ignore"):
        logits = numpy.log(probabilities)
    samples = mk.random.categorical(logits, 6000, seed=5)
    assert samples.dtype == numpy.int32 and samples.shape == (2, 6000)
    counts = numpy.stack([numpy.bincount(row, minlength=3) / 6000 for row in samples.numpy()])
    numpy.testing.assert_allclose(counts, probabilities, atol=0.025)
    numpy.testing.assert_array_equal(mk.random.categorical(logits, 6000, seed=5).numpy(), samples.numpy())
    with pytest.raises(ValueError, match="2-D"):
        mk.random.categorical(numpy.zeros(3), 2)
