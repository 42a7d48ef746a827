"""Initializers: distributions, fans, seeds, configs and lookup by name."""
import math

import numpy
import pytest

import minikeras
from minikeras import initializers

BIG = (600, 400)  # 240k draws: sample statistics within ~1% of the truth


def _std(fan):
    return math.sqrt(1.0 / fan)


@pytest.mark.parametrize("name, limit", [
    ("glorot_uniform", math.sqrt(6.0 / (600 + 400))),
    ("he_uniform", math.sqrt(6.0 / 600)),
    ("lecun_uniform", math.sqrt(3.0 / 600)),
])
def test_uniform_variance_scaling_limits_and_moments(name, limit):
    values = initializers.get(name)(BIG, dtype="float32")
    assert values.dtype == numpy.float32 and values.shape == BIG
    assert values.min() >= -limit and values.max() <= limit
    assert values.min() < -0.99 * limit and values.max() > 0.99 * limit
    assert abs(values.mean()) < 0.01 * limit
    assert values.std() == pytest.approx(limit / math.sqrt(3.0), rel=0.01)


@pytest.mark.parametrize("name, stddev", [
    ("glorot_normal", math.sqrt(2.0 / (600 + 400))),
    ("he_normal", math.sqrt(2.0 / 600)),
    ("lecun_normal", math.sqrt(1.0 / 600)),
])
def test_truncated_normal_variance_scaling_has_the_keras_stddev(name, stddev):
    values = initializers.get(name)(BIG, dtype="float64")
    # Keras divides by 0.8796 so that the *truncated* draw has this stddev,
    # and truncates at 2 stddev of the untruncated distribution.
    assert values.std() == pytest.approx(stddev, rel=0.01)
    assert numpy.abs(values).max() <= 2 * stddev / 0.87962566103423978 + 1e-12
    assert abs(values.mean()) < 0.01 * stddev


def test_random_normal_uniform_and_truncated_defaults():
    normal = initializers.RandomNormal()(BIG)
    assert normal.mean() == pytest.approx(0.0, abs=5e-4)
    assert normal.std() == pytest.approx(0.05, rel=0.01)
    uniform = initializers.get("uniform")(BIG)  # Keras alias of RandomUniform(-0.05, 0.05)
    assert uniform.min() >= -0.05 and uniform.max() < 0.05
    assert uniform.std() == pytest.approx(0.1 / math.sqrt(12), rel=0.01)
    truncated = initializers.TruncatedNormal(mean=1.0, stddev=0.5)(BIG)
    assert truncated.min() >= 0.0 and truncated.max() <= 2.0
    # A unit normal truncated to [-2, 2] has stddev 0.8796.
    assert truncated.std() == pytest.approx(0.5 * 0.87962566103423978, rel=0.01)
    assert truncated.mean() == pytest.approx(1.0, abs=2e-3)


def test_variance_scaling_modes_and_conv_fans():
    # Conv kernel (3, 3, 16, 32): fan_in = 9 * 16, fan_out = 9 * 32.
    assert initializers.compute_fans((3, 3, 16, 32)) == (144, 288)
    assert initializers.compute_fans((5,)) == (5, 5)
    assert initializers.compute_fans(()) == (1, 1)
    shape = (3, 3, 64, 128)
    for mode, fan in (("fan_in", 9 * 64), ("fan_out", 9 * 128), ("fan_avg", 9 * 96)):
        values = initializers.VarianceScaling(2.0, mode, "untruncated_normal")(shape, dtype="float64")
        assert values.std() == pytest.approx(math.sqrt(2.0 / fan), rel=0.02)
    values = initializers.VarianceScaling(1.0, "fan_in", "uniform")(shape)
    assert numpy.abs(values).max() <= math.sqrt(3.0 / (9 * 64))


def test_zeros_ones_constant_identity_keep_dtype():
    assert initializers.get("zeros")((2, 3), dtype="float64").dtype == numpy.float64
    numpy.testing.assert_array_equal(initializers.get("ones")((2,)), [1.0, 1.0])
    numpy.testing.assert_array_equal(initializers.Constant(0.5)((2, 2)), numpy.full((2, 2), 0.5, "float32"))
    numpy.testing.assert_array_equal(initializers.Identity(gain=2.0)((2, 3)), 2 * numpy.eye(2, 3))
    with pytest.raises(ValueError, match="2-D"):
        initializers.Identity()((2, 2, 2))


@pytest.mark.parametrize("shape", [(20, 20), (30, 10), (10, 30), (3, 3, 4, 8)])
def test_orthogonal_is_orthogonal(shape):
    values = initializers.Orthogonal(gain=1.5)(shape, dtype="float64")
    assert values.shape == shape
    matrix = values.reshape(-1, shape[-1])
    rows, cols = matrix.shape
    if rows >= cols:
        numpy.testing.assert_allclose(matrix.T @ matrix, 2.25 * numpy.eye(cols), atol=1e-10)
    else:
        numpy.testing.assert_allclose(matrix @ matrix.T, 2.25 * numpy.eye(rows), atol=1e-10)


def test_orthogonal_needs_rank_two():
    with pytest.raises(ValueError, match="rank >= 2"):
        initializers.Orthogonal()((5,))


def test_library_seed_makes_draws_repeat_and_unseeded_calls_differ():
    init = initializers.GlorotUniform()
    minikeras.random.seed(7)
    first, second = init((4, 5)), init((4, 5))
    assert not numpy.array_equal(first, second)
    minikeras.random.seed(7)
    numpy.testing.assert_array_equal(init((4, 5)), first)
    numpy.testing.assert_array_equal(init((4, 5)), second)


def test_explicit_seed_gives_the_same_values_every_call():
    init = initializers.HeNormal(seed=3)
    first = init((6, 4))
    minikeras.random.seed(99)  # the library seed does not affect a seeded initializer
    numpy.testing.assert_array_equal(init((6, 4)), first)
    assert not numpy.array_equal(initializers.HeNormal(seed=4)((6, 4)), first)


def test_float64_draw_then_cast_gives_consistent_dtypes():
    minikeras.random.seed(5)
    in_double = initializers.RandomNormal(seed=1)((8,), dtype="float64")
    in_single = initializers.RandomNormal(seed=1)((8,), dtype="float32")
    numpy.testing.assert_array_equal(in_double.astype(numpy.float32), in_single)


@pytest.mark.parametrize("initializer", [
    initializers.RandomNormal(mean=1.0, stddev=0.2, seed=2),
    initializers.RandomUniform(-1.0, 2.0, seed=2),
    initializers.TruncatedNormal(stddev=0.3, seed=2),
    initializers.VarianceScaling(0.5, "fan_out", "uniform", seed=2),
    initializers.GlorotNormal(seed=2),
    initializers.HeUniform(seed=2),
    initializers.LecunNormal(seed=2),
    initializers.Orthogonal(gain=0.5, seed=2),
    initializers.Constant(3.0),
    initializers.Zeros(),
    initializers.Identity(2.0),
])
def test_serialize_round_trip_gives_the_same_values(initializer):
    config = initializers.serialize(initializer)
    assert config["class_name"] == type(initializer).__name__
    rebuilt = initializers.deserialize(config)
    assert type(rebuilt) is type(initializer) and rebuilt.get_config() == initializer.get_config()
    numpy.testing.assert_array_equal(rebuilt((4, 4)), initializer((4, 4)))
    assert initializers.get(config).get_config() == initializer.get_config()


def test_get_accepts_names_classes_instances_callables_and_arrays():
    assert isinstance(initializers.get("glorot_uniform"), initializers.GlorotUniform)
    assert isinstance(initializers.get("GlorotUniform"), initializers.GlorotUniform)
    assert isinstance(initializers.get(initializers.HeNormal), initializers.HeNormal)
    instance = initializers.Ones()
    assert initializers.get(instance) is instance
    assert initializers.get(None) is None

    def custom(shape, dtype="float32"):
        return numpy.full(shape, 7, dtype)

    assert initializers.get(custom) is custom
    array = numpy.arange(6.0).reshape(2, 3)
    numpy.testing.assert_array_equal(initializers.get(array)((2, 3)), array.astype("float32"))
    with pytest.raises(ValueError, match="shape"):
        initializers.get(array)((3, 2))
    assert initializers.deserialize("custom", custom_objects={"custom": custom}) is custom


def test_unknown_name_lists_known_ones():
    with pytest.raises(ValueError, match="Unknown initializer 'glorot'.*glorot_uniform"):
        initializers.get("glorot")
    with pytest.raises(ValueError, match="Could not interpret"):
        initializers.get(42)


def test_bad_arguments_raise():
    with pytest.raises(ValueError, match="mode"):
        initializers.VarianceScaling(mode="fan_sum")
    with pytest.raises(ValueError, match="distribution"):
        initializers.VarianceScaling(distribution="cauchy")
    with pytest.raises(ValueError, match="scale"):
        initializers.VarianceScaling(scale=0)
    with pytest.raises(ValueError, match="stddev"):
        initializers.RandomNormal(stddev=-1)
    with pytest.raises(ValueError, match="minval < maxval"):
        initializers.RandomUniform(1.0, 1.0)
    with pytest.raises(ValueError, match="seed"):
        initializers.GlorotUniform(seed=-1)
    with pytest.raises(ValueError, match="floating dtype"):
        initializers.GlorotUniform()((2, 2), dtype="int32")


def test_normal_alias_keras_names():
    assert isinstance(initializers.get("normal"), initializers.RandomNormal)
    assert initializers.glorot_uniform is initializers.GlorotUniform
    assert initializers.serialize(initializers.get("he_normal")) == {"class_name": "HeNormal", "config": {"seed": None}}
