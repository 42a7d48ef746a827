"""minikeras.random's Keras 3 functions: SeedGenerator, randint, shuffle, dropout."""
import numpy
import pytest

import minikeras as mk
from minikeras import random


def test_randint_range_dtype_and_int_seed_repeats():
    a = random.randint((1000,), 3, 7, seed=5)
    values = a.numpy()
    assert a.dtype == numpy.int32 and values.shape == (1000,)
    assert values.min() == 3 and values.max() == 6  # maxval excluded, every value hit
    numpy.testing.assert_array_equal(values, random.randint((1000,), 3, 7, seed=5).numpy())
    assert not numpy.array_equal(values, random.randint((1000,), 3, 7, seed=6).numpy())
    assert random.randint(4, 0, 2, dtype="int64").dtype == numpy.int64


def test_seed_generator_advances_and_is_reproducible():
    first = random.SeedGenerator(42)
    draws = [random.randint((50,), 0, 1000, seed=first).numpy() for _ in range(2)]
    assert not numpy.array_equal(draws[0], draws[1])
    again = random.SeedGenerator(42)
    numpy.testing.assert_array_equal(random.randint((50,), 0, 1000, seed=again).numpy(), draws[0])
    assert first.state == (42, 2)
    assert random.SeedGenerator.from_config(first.get_config()).seed == 42


def test_seed_none_follows_the_library_seed():
    mk.random.seed(7)
    a = random.randint((20,), 0, 1000).numpy()
    mk.random.seed(7)
    numpy.testing.assert_array_equal(random.randint((20,), 0, 1000).numpy(), a)
    mk.random.seed(7)
    g1 = random.SeedGenerator()
    mk.random.seed(7)
    assert random.SeedGenerator().seed == g1.seed


def test_shuffle_permutes_along_an_axis():
    x = numpy.arange(24.0).reshape(4, 6)
    rows = random.shuffle(x, seed=1).numpy()
    assert sorted(map(tuple, rows)) == sorted(map(tuple, x))
    columns = random.shuffle(x, axis=1, seed=3).numpy()
    numpy.testing.assert_array_equal(numpy.sort(columns, axis=1), x)
    assert not numpy.array_equal(columns, x)
    numpy.testing.assert_array_equal(random.shuffle(x, seed=1).numpy(), rows)


def test_shuffle_gradient_flows_back_through_the_permutation():
    x = mk.tensor(numpy.arange(5.0), requires_grad=True)
    weights = mk.tensor(numpy.arange(5.0) + 1)
    (random.shuffle(x, seed=2) * weights).sum().backward()
    shuffled = random.shuffle(numpy.arange(5.0), seed=2).numpy().astype(int)
    expected = numpy.empty(5)
    expected[shuffled] = numpy.arange(5.0) + 1
    numpy.testing.assert_allclose(x.grad.numpy(), expected)


def test_dropout_scales_kept_values_and_repeats_with_a_seed():
    x = numpy.ones((200, 50), "float32")
    out = random.dropout(x, 0.25, seed=4).numpy()
    kept = out != 0
    numpy.testing.assert_allclose(out[kept], 1 / 0.75, rtol=1e-6)
    assert 0.7 < kept.mean() < 0.8
    numpy.testing.assert_array_equal(random.dropout(x, 0.25, seed=4).numpy(), out)
    channel = random.dropout(x, 0.5, noise_shape=(1, 50), seed=1).numpy()
    assert (channel == channel[0]).all()


@pytest.mark.parametrize("call", [
    lambda: random.randint((2,), 5, 5),
    lambda: random.randint((2,), 0, 5, dtype="float32"),
    lambda: random.randint((2,), 0, 5, seed=-1),
    lambda: random.randint((2,), 0, 5, seed="x"),
    lambda: random.shuffle(numpy.zeros(3), axis=2),
    lambda: random.SeedGenerator(1.5),
])
def test_bad_arguments_raise_value_error(call):
    with pytest.raises(ValueError):
        call()


def test_normal_and_uniform_take_keras_s_seed():
    a = random.normal((2000,), mean=3.0, stddev=2.0, seed=8).numpy()
    numpy.testing.assert_array_equal(a, random.normal((2000,), mean=3.0, stddev=2.0, seed=8).numpy())
    assert a.dtype == numpy.float32
    assert abs(a.mean() - 3.0) < 0.2 and abs(a.std() - 2.0) < 0.2
    generator = random.SeedGenerator(5)
    b = random.uniform((2000,), minval=-1.0, maxval=4.0, seed=generator).numpy()
    assert b.min() >= -1.0 and b.max() < 4.0 and abs(b.mean() - 1.5) < 0.2
    assert not numpy.array_equal(b, random.uniform((2000,), minval=-1.0, maxval=4.0, seed=generator).numpy())
    assert random.normal((3,), dtype="float64", seed=1).dtype == numpy.float64
    assert random.uniform((3,), dtype=None).dtype == numpy.float32  # Keras's dtype=None is floatx


def test_unseeded_normal_still_follows_the_library_seed():
    mk.random.seed(3)
    first = random.normal((5,)).numpy()
    mk.random.seed(3)
    numpy.testing.assert_array_equal(random.normal((5,)).numpy(), first)


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("draw", [
    lambda dtype, seed: random.normal((500,), dtype=dtype, seed=seed),
    lambda dtype, seed: random.uniform((500,), dtype=dtype, seed=seed),
    lambda dtype, seed: random.truncated_normal((500,), dtype=dtype, seed=seed),
    lambda dtype, seed: random.gamma((500,), 2.0, dtype=dtype, seed=seed),
])
def test_16_bit_float_draws(draw, dtype):
    for seed in (None, 3):
        values = draw(dtype, seed)
        assert values.dtype.name == dtype
        as32 = values.numpy().astype("float32")
        assert numpy.all(numpy.isfinite(as32)) and as32.std() > 0.1
