"""Inverted dropout: drop rate, scaling, reproducibility, gradient, errors."""
import numpy
import pytest

import minikeras as mk
from minikeras import ops


def test_fraction_dropped_and_mean_kept():
    x = mk.tensor(numpy.ones((500, 400), dtype="float32"))
    out = ops.dropout(x, 0.3).numpy()
    assert out.dtype == numpy.float32
    assert abs((out == 0).mean() - 0.3) < 0.01
    kept = out[out != 0]
    numpy.testing.assert_allclose(kept, 1 / 0.7, rtol=1e-6)
    assert abs(out.mean() - 1.0) < 0.02


def test_rate_zero_returns_the_input():
    x = mk.tensor(numpy.ones((3, 4), dtype="float32"))
    assert ops.dropout(x, 0.0) is x


def test_same_seed_same_mask_and_generator_argument():
    x = mk.tensor(numpy.ones((50, 40), dtype="float32"))
    mk.random.seed(7)
    first = ops.dropout(x, 0.5).numpy()
    second = ops.dropout(x, 0.5).numpy()
    mk.random.seed(7)
    again = ops.dropout(x, 0.5).numpy()
    numpy.testing.assert_array_equal(first, again)
    assert not numpy.array_equal(first, second)  # the stream moves on between calls
    a = ops.dropout(x, 0.5, generator=numpy.random.default_rng(3)).numpy()
    b = ops.dropout(x, 0.5, generator=numpy.random.default_rng(3)).numpy()
    numpy.testing.assert_array_equal(a, b)


def test_gradient_equals_the_scaled_mask(rng):
    values = rng.standard_normal((20, 30)).astype("float32") + 3.0  # never exactly zero
    x = mk.Tensor(values, requires_grad=True)
    out = ops.dropout(x, 0.25)
    upstream = rng.standard_normal((20, 30)).astype("float32")
    out.backward(upstream)
    mask = out.numpy() / values
    assert (numpy.isclose(mask, 0) | numpy.isclose(mask, 1 / 0.75)).all()
    assert 0 < (mask == 0).mean() < 1
    numpy.testing.assert_allclose(x.grad.numpy(), upstream * mask, rtol=1e-6)
    assert x.grad.dtype == numpy.float32


def test_float64_input_keeps_float64():
    out = ops.dropout(mk.tensor(numpy.ones((10, 10))), 0.5)
    assert out.dtype == numpy.float64


def test_noise_shape_drops_whole_channels():
    x = mk.tensor(numpy.ones((4, 5, 5, 16), dtype="float32"))
    out = ops.dropout(x, 0.5, noise_shape=(4, 1, 1, 16)).numpy()
    per_channel = out.reshape(4, 25, 16)
    # Each (sample, channel) is all kept or all dropped.
    assert (per_channel.min(axis=1) == per_channel.max(axis=1)).all()
    assert 0 < (per_channel[:, 0] == 0).mean() < 1
    none_entries = ops.dropout(x, 0.5, noise_shape=(None, 1, 1, None)).numpy().reshape(4, 25, 16)
    assert (none_entries.min(axis=1) == none_entries.max(axis=1)).all()


def test_errors():
    x = mk.tensor(numpy.ones((4, 3), dtype="float32"))
    for rate in (1.0, -0.1, 1.5, "0.5", True):
        with pytest.raises(ValueError, match=r"dropout: rate must be a number in \[0, 1\)"):
            ops.dropout(x, rate)
    with pytest.raises(ValueError, match=r"noise_shape \(4, 2\) does not broadcast to the input shape \(4, 3\)"):
        ops.dropout(x, 0.5, noise_shape=(4, 2))
    with pytest.raises(ValueError, match="one entry per axis"):
        ops.dropout(x, 0.5, noise_shape=(4,))
    with pytest.raises(TypeError, match="floating-point"):
        ops.dropout(mk.tensor(numpy.ones(3, dtype="int32")), 0.5)
