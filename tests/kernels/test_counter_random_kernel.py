"""The counter-based random kernel (``kernels/counter_random.py``) against
SplitMix64 written out in Python integers: one launch, the device offset
advanced by what it drew, uniform and normal numbers with the right laws."""
import math

import numpy
import pytest

from minikeras import kernels

MASK = (1 << 64) - 1


def _splitmix64(seed, start, count):
    """SplitMix64 (Steele et al. 2014) seeded with ``seed``: outputs ``start .. start + count - 1``."""
    state, out = (seed + start * 0x9E3779B97F4A7C15) & MASK, []
    for _ in range(count):
        state = (state + 0x9E3779B97F4A7C15) & MASK
        z = ((state ^ (state >> 30)) * 0xBF58476D1CE4E5B9) & MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
        out.append(z ^ (z >> 31))
    return out


def test_the_python_splitmix64_gives_the_published_numbers():
    # The reference implementation's outputs for seed 1234567 (Vigna's splitmix64.c).
    assert _splitmix64(1234567, 0, 3) == [6457827717110365317, 3203168211198807973, 9817491932198370423]


def _state(upload, offset):
    return upload(numpy.array([offset, 0], numpy.uint64))


@pytest.mark.parametrize("dtype, bits", [("float32", 24), ("float64", 53)])
def test_uniform_numbers_are_splitmix64_from_the_device_offset_which_advances(kernel_device, upload, launches, dtype,
                                                                             bits):
    key, offset = 0xDEADBEEFCAFEF00D, 1000
    state = _state(upload, offset)
    draw = kernels.get("counter_random", kernel_device)
    with launches(kernel_device, 1):
        first = draw((3, 5), dtype, key, state, False)
    with launches(kernel_device, 1):
        second = draw((7,), dtype, key, state, False)
    expected = [(z >> (64 - bits)) * 2.0 ** -bits for z in _splitmix64(key, offset, 22)]
    first, second = kernel_device.to_host(first), kernel_device.to_host(second)
    assert first.dtype == dtype and first.shape == (3, 5) and second.shape == (7,)
    numpy.testing.assert_array_equal(first.ravel(), numpy.array(expected[:15], dtype))  # exact at these bits
    numpy.testing.assert_array_equal(second, numpy.array(expected[15:], dtype))  # the stream goes on
    assert kernel_device.to_host(state).tolist() == [offset + 22, 0]  # advanced on the device; the ticket reset


def test_normal_numbers_are_box_muller_on_pairs_and_advance_two_per_value(kernel_device, upload, launches):
    key = 42
    state = _state(upload, 0)
    with launches(kernel_device, 1):
        values = kernels.get("counter_random", kernel_device)((4,), "float64", key, state, True)
    z = _splitmix64(key, 0, 8)
    expected = [math.sqrt(-2 * math.log(((a >> 11) + 1) * 2.0 ** -53)) * math.cos(2 * math.pi * (b >> 11) * 2.0 ** -53)
                for a, b in zip(z[0::2], z[1::2])]
    numpy.testing.assert_allclose(kernel_device.to_host(values), expected, rtol=1e-13)
    assert kernel_device.to_host(state).tolist() == [8, 0]


def test_the_numbers_follow_their_laws_and_keys_give_independent_streams(kernel_device, upload):
    draw = kernels.get("counter_random", kernel_device)
    with kernel_device.activate():
        uniform = kernel_device.to_host(draw((200_000,), "float32", 7, _state(upload, 0), False))
        normal = kernel_device.to_host(draw((100_000,), "float64", 7, _state(upload, 0), True))
        other = kernel_device.to_host(draw((200_000,), "float32", 8, _state(upload, 0), False))
    assert uniform.min() >= 0 and uniform.max() < 1
    assert abs(uniform.mean() - 0.5) < 0.003 and abs(uniform.var() - 1 / 12) < 0.002
    counts, _ = numpy.histogram(uniform, bins=10, range=(0, 1))
    assert (abs(counts - 20_000) < 700).all()  # ~5 standard deviations of a bin count
    assert abs(normal.mean()) < 0.015 and abs(normal.std() - 1) < 0.01
    assert abs((abs(normal) < 1).mean() - 0.6827) < 0.005
    assert abs(numpy.corrcoef(uniform, other)[0, 1]) < 0.01
