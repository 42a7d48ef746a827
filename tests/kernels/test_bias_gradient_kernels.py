"""The ReLU mask and the bias gradient in one launch (kernels/bias_gradient.py)."""
import numpy
import pytest

from minikeras import kernels
from minikeras.kernels.bias_gradient import grid_for


@pytest.mark.parametrize("shape", [(5, 3), (1100, 70), (20000, 32)])  # one block; 3x3 blocks; 40 row chunks
def test_the_masked_gradient_and_its_column_sums(kernel_device, upload, launches, rng, shape):
    grad = rng.normal(size=shape).astype(numpy.float32)
    out = numpy.maximum(rng.normal(size=shape), 0).astype(numpy.float32)
    target = numpy.full(shape, numpy.nan, numpy.float32)
    with launches(kernel_device, 1):
        masked, grad_bias = kernels.get("relu_bias_backward", kernel_device)(upload(grad), upload(out), upload(target))
    expected = grad * (out > 0)
    numpy.testing.assert_array_equal(kernel_device.to_host(masked), expected)
    numpy.testing.assert_allclose(kernel_device.to_host(grad_bias), expected.astype(numpy.float64).sum(axis=0),
                                  rtol=1e-4, atol=1e-3)


def test_repeated_launches_give_the_same_bits(kernel_device, upload, rng):
    """The partial sums are added in a fixed order, and the per-tile counters are reset for the next launch."""
    grad, out = rng.normal(size=(4000, 40)), rng.normal(size=(4000, 40))
    run = kernels.get("relu_bias_backward", kernel_device)
    with kernel_device.activate():
        first = kernel_device.to_host(run(upload(grad), upload(out), upload(numpy.empty_like(grad)))[1])
        for _ in range(3):
            again = kernel_device.to_host(run(upload(grad), upload(out), upload(numpy.empty_like(grad)))[1])
            numpy.testing.assert_array_equal(again, first)
    numpy.testing.assert_allclose(first, (grad * (out > 0)).sum(axis=0), rtol=1e-12, atol=1e-12)


def test_the_grid_splits_rows_into_chunks_within_the_block_budget():
    assert grid_for(5, 3) == ((1, 1), (32, 16))
    assert grid_for(115200, 32) == ((1, 225), (32, 16))  # a CIFAR convolution's gradient
    tiles, chunks = grid_for(10 ** 7, 4096)[0]
    assert tiles == 128 and tiles * chunks <= 2048
