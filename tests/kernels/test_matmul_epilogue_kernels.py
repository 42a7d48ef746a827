"""The small matrix product with its bias and ReLU in one launch (kernels/matmul_epilogue.py)."""
import numpy
import pytest

from minikeras import kernels
from minikeras.backend import tuning
from minikeras.kernels.matmul_epilogue import fits


@pytest.mark.parametrize("rows, inner, columns", [(5, 7, 3), (70, 45, 40), (128, 300, 10)])
@pytest.mark.parametrize("with_bias, relu", [(True, True), (True, False), (False, True)])
def test_the_product_with_bias_and_relu(kernel_device, upload, launches, rng, rows, inner, columns, with_bias, relu):
    a = rng.normal(size=(rows, inner)).astype(numpy.float32)
    b = rng.normal(size=(inner, columns)).astype(numpy.float32)
    bias = rng.normal(size=columns).astype(numpy.float32) if with_bias else None
    with launches(kernel_device, 1):
        out = kernels.get("matmul_bias_relu", kernel_device)(upload(a), upload(b), None if bias is None else upload(bias),
                                                             relu)
    expected = a.astype(numpy.float64) @ b + (0 if bias is None else bias)
    if relu:
        expected = numpy.maximum(expected, 0)
    result = kernel_device.to_host(out)
    assert result.dtype == numpy.float32 and result.shape == (rows, columns)
    numpy.testing.assert_allclose(result, expected, rtol=1e-4, atol=1e-4)


def test_relu_keeps_nan(kernel_device, upload):
    a = numpy.array([[numpy.nan, 1.0], [1.0, -3.0]])
    with kernel_device.activate():
        out = kernels.get("matmul_bias_relu", kernel_device)(upload(a), upload(numpy.eye(2)), upload([0.5, 0.5]), True)
    numpy.testing.assert_array_equal(kernel_device.to_host(out), [[numpy.nan, numpy.nan], [1.5, 0.0]])


def test_only_small_products_fit():
    assert fits(128, 512, 256) and fits(128, 256, 10)  # measured faster than cuBLAS + bias_relu on an H200
    assert not fits(128, 2304, 256) and not fits(4096, 4096, 4096)  # measured slower
    assert fits(1, 1, tuning.FUSED_MATMUL_MAX_MACS) and not fits(1, 2, tuning.FUSED_MATMUL_MAX_MACS)
