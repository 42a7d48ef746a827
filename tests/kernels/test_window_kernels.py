"""Pooling, im2col and col2im kernels against naive loops, one launch each
on the simulated GPU (the per-offset NumPy passes they replace cost about
23 launches per 2x2 max pooling)."""
import numpy
import pytest

from minikeras import kernels
from minikeras.ops.nn.sliding_window import WindowGeometry


def _naive_windows(x, geometry, fill):
    """Every window of the padded ``x``: (N, Ho, Wo, kh, kw, C)."""
    (top, bottom), (left, right) = geometry.pads
    padded = numpy.pad(x, ((0, 0), (top, bottom), (left, right), (0, 0)), constant_values=fill)
    (kh, kw), (sh, sw), (dh, dw) = geometry.window, geometry.strides, geometry.dilation
    out = numpy.empty((x.shape[0], geometry.out_h, geometry.out_w, kh, kw, x.shape[3]), x.dtype)
    for i in range(geometry.out_h):
        for j in range(geometry.out_w):
            out[:, i, j] = padded[:, i * sh:i * sh + (kh - 1) * dh + 1:dh, j * sw:j * sw + (kw - 1) * dw + 1:dw]
    return out


@pytest.mark.parametrize("padding,strides", [("valid", (2, 2)), ("same", (2, 2)), ("valid", (1, 1))])
def test_max_pool_forward_and_backward(kernel_device, upload, launches, rng, padding, strides):
    x = rng.normal(size=(2, 5, 6, 3))
    geometry = WindowGeometry("max_pool2d", x.shape, (2, 2), strides, (1, 1), padding)
    windows = _naive_windows(x, geometry, -numpy.inf).reshape(2, geometry.out_h, geometry.out_w, 4, 3)
    with launches(kernel_device, 1):
        out, index = kernels.get("max_pool", kernel_device)(upload(x), geometry, True)
    numpy.testing.assert_array_equal(kernel_device.to_host(out), windows.max(axis=3))
    grad = rng.normal(size=windows.max(axis=3).shape)
    with launches(kernel_device, 1):
        grad_x = kernels.get("max_pool_backward", kernel_device)(upload(grad), index, geometry)
    # The gradient of each window goes to its first maximum.
    expected = numpy.zeros_like(x)
    winners = windows.argmax(axis=3)
    (top, _), (left, _) = geometry.pads
    for n, i, j, c in numpy.ndindex(*winners.shape):
        di, dj = divmod(winners[n, i, j, c], 2)
        expected[n, i * strides[0] + di - top, j * strides[1] + dj - left, c] += grad[n, i, j, c]
    numpy.testing.assert_allclose(kernel_device.to_host(grad_x), expected, rtol=1e-12)


@pytest.mark.parametrize("padding", ["valid", "same"])
def test_avg_pool_forward_and_backward_count_only_real_elements(kernel_device, upload, launches, rng, padding):
    x = rng.normal(size=(2, 5, 5, 2))
    geometry = WindowGeometry("avg_pool2d", x.shape, (2, 2), (2, 2), (1, 1), padding)
    windows = _naive_windows(x, geometry, numpy.nan)
    counts = (~numpy.isnan(windows)).sum(axis=(3, 4))
    with launches(kernel_device, 1):
        out = kernels.get("avg_pool", kernel_device)(upload(x), geometry)
    numpy.testing.assert_allclose(kernel_device.to_host(out), numpy.nansum(windows, axis=(3, 4)) / counts, rtol=1e-12)
    grad = rng.normal(size=counts.shape)
    with launches(kernel_device, 1):
        grad_x = kernels.get("avg_pool_backward", kernel_device)(upload(grad), geometry)
    expected = numpy.zeros_like(x)
    (top, _), (left, _) = geometry.pads
    for n, i, j, c in numpy.ndindex(*grad.shape):
        for di in range(2):
            for dj in range(2):
                h, w = 2 * i + di - top, 2 * j + dj - left
                if 0 <= h < 5 and 0 <= w < 5:
                    expected[n, h, w, c] += grad[n, i, j, c] / counts[n, i, j, c]
    numpy.testing.assert_allclose(kernel_device.to_host(grad_x), expected, rtol=1e-12)


@pytest.mark.parametrize("padding,strides,dilation", [("same", (1, 1), (1, 1)), ("valid", (2, 1), (1, 2))])
def test_im2col_and_col2im(kernel_device, upload, launches, rng, padding, strides, dilation):
    x = rng.normal(size=(2, 6, 7, 3))
    geometry = WindowGeometry("conv2d", x.shape, (3, 2), strides, dilation, padding)
    expected = _naive_windows(x, geometry, 0.0)
    block = upload(numpy.empty_like(expected))
    with launches(kernel_device, 1):
        kernels.get("im2col", kernel_device)(upload(x), geometry, block, False, [None])
    numpy.testing.assert_array_equal(kernel_device.to_host(block), expected)
    # col2im is im2col's adjoint: <im2col(x), p> == <x, col2im(p)>.
    patches = rng.normal(size=expected.shape)
    target = upload(numpy.full_like(x, numpy.nan))  # overwritten, not added to
    with launches(kernel_device, 1):
        kernels.get("col2im", kernel_device)(upload(patches), geometry, target)
    numpy.testing.assert_allclose((expected * patches).sum(), (x * kernel_device.to_host(target)).sum(), rtol=1e-12)


def test_im2col_reuses_one_padded_buffer_for_blocks_in_any_order(kernel_device, upload, rng):
    """A CPU thread may get the short last block first: the buffer is sized for the largest."""
    x = rng.normal(size=(5, 4, 4, 2))
    geometry = WindowGeometry("conv2d", x.shape, (3, 3), (1, 1), (1, 1), "same")
    expected = _naive_windows(x, geometry, 0.0)
    holder = [None, 4]
    im2col = kernels.get("im2col", kernel_device)
    with kernel_device.activate():
        for rows in (slice(4, 5), slice(0, 4)):
            block = upload(numpy.empty_like(expected[rows]))
            im2col(upload(x[rows]), geometry, block, False, holder)
            numpy.testing.assert_array_equal(kernel_device.to_host(block), expected[rows])
