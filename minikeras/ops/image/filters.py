"""Image filters: gaussian_blur, sobel_edges, ssim.

``gaussian_blur`` is a depthwise convolution with "same" zero padding and
the normalised Gaussian kernel ``tf``'s Keras backend builds;
``sobel_edges`` pads by reflection and convolves with the 3x3 Sobel kernels,
giving ``(..., channels, 2)`` with the vertical then the horizontal gradient
(``tf.image.sobel_edges``); ``ssim`` is Keras's backend-agnostic SSIM
(Gaussian window, "valid" convolutions, the mean over space then channels).
All are compositions of differentiable ops.
"""

__all__ = ["gaussian_blur", "sobel_edges", "ssim"]

import numpy

from minikeras.backend.dtypes import is_float_dtype
from minikeras.ops.array.joining import stack
from minikeras.ops.array.padding import pad
from minikeras.ops.array.reshaping import reshape, transpose
from minikeras.ops.image._layout import images_last
from minikeras.ops.nn.keras_functions import conv, depthwise_conv
from minikeras.ops.reduce import mean
from minikeras._support.argument_validation import is_int, validate_int, validate_number


def _gaussian_1d(size, sigma):
    x = numpy.arange(size, dtype="float64") - (size - 1) / 2
    kernel = numpy.exp(-0.5 * (x / sigma) ** 2)
    return kernel / kernel.sum()


def _pair(name, value, check):
    """One value or two (height, width), each checked by ``check`` (a 1-D array is a sequence of them)."""
    if isinstance(value, numpy.ndarray) and value.ndim == 1:
        value = tuple(value.tolist())
    if isinstance(value, (tuple, list)):
        if len(value) != 2:
            raise ValueError(f"gaussian_blur: {name} must be one value or two, received {value!r}.")
        return tuple(check(item) for item in value)
    return (check(value),) * 2


def gaussian_blur(images, kernel_size=(3, 3), sigma=(1.0, 1.0), data_format=None):
    """Blur each channel with a ``kernel_size`` Gaussian of standard deviations ``sigma``."""
    sizes = _pair("kernel_size", kernel_size, lambda v: validate_int("gaussian_blur", "kernel_size", v, minimum=1))
    sigmas = _pair("sigma", sigma, lambda v: validate_number("gaussian_blur", "sigma", v, minimum=0))
    if min(sigmas) <= 0 or max(sizes) > 2**16:
        raise ValueError(f"gaussian_blur: kernel_size and sigma must be two positive values (sizes up to 65536), "
                         f"received {kernel_size!r} and {sigma!r}.")
    x, restore = images_last("gaussian_blur", images, data_format)
    dtype = x.dtype if is_float_dtype(x.dtype) else numpy.dtype("float32")
    # Keras: outer(kernel along sizes[1] with sigma[1], kernel along sizes[0] with sigma[0]), read as
    # (sizes[0], sizes[1]); the same thing for square kernels.
    kernel = numpy.outer(_gaussian_1d(sizes[1], sigmas[1]), _gaussian_1d(sizes[0], sigmas[0]))
    kernel = kernel.reshape(sizes[0], sizes[1], 1, 1)
    kernel = numpy.tile(kernel, (1, 1, x.shape[-1], 1)).astype(dtype)
    out = depthwise_conv(x.astype(dtype) if x.dtype != dtype else x, kernel, padding="same",
                         data_format="channels_last")
    return restore(out)


_SOBEL_VERTICAL = numpy.array([[-1, -2, -1], [0, 0, 0], [1, 2, 1]], dtype="float64")


def sobel_edges(images, data_format=None):
    """Sobel gradients of each channel: ``(..., H, W, C, 2)`` (channels-first: ``(N, C, H, W, 2)``)."""
    from minikeras.ops.nn.keras_functions import _data_format

    data_format = _data_format("sobel_edges", data_format)
    x, restore = images_last("sobel_edges", images, data_format)
    dtype = x.dtype if is_float_dtype(x.dtype) else numpy.dtype("float32")
    x = x.astype(dtype) if x.dtype != dtype else x
    channels = x.shape[-1]
    padded = pad(x, [(0, 0), (1, 1), (1, 1), (0, 0)], mode="reflect")
    edges = []
    for kernel in (_SOBEL_VERTICAL, _SOBEL_VERTICAL.T):
        weights = numpy.tile(kernel.reshape(3, 3, 1, 1), (1, 1, channels, 1)).astype(dtype)
        edges.append(depthwise_conv(padded, weights, data_format="channels_last"))
    out = stack(edges, -1)  # (N, H, W, C, 2)
    if data_format == "channels_first":
        out = transpose(out, (0, 3, 1, 2, 4))
    return out if getattr(images, "ndim", len(numpy.shape(images))) == 4 else out[0]


def ssim(image1, image2, max_val=1.0, filter_size=11, filter_sigma=1.5, k1=0.01, k2=0.03, data_format=None):
    """Structural similarity of two images (or batches): a scalar per image, averaged over channels."""
    max_val = validate_number("ssim", "max_val", max_val, minimum=0)
    filter_size = validate_int("ssim", "filter_size", filter_size, minimum=1)
    filter_sigma = validate_number("ssim", "filter_sigma", filter_sigma, minimum=0)
    k1, k2 = validate_number("ssim", "k1", k1), validate_number("ssim", "k2", k2)
    if filter_sigma == 0:
        raise ValueError("ssim: filter_sigma must be positive, received 0.")
    a, restore = images_last("ssim", image1, data_format)
    b, _ = images_last("ssim", image2, data_format)
    if a.shape != b.shape:
        raise ValueError(f"ssim: the images must have the same shape, received {a.shape} and {b.shape}.")
    original = a.dtype
    dtype = a.dtype if is_float_dtype(a.dtype) else numpy.dtype("float32")
    a, b = (t.astype(dtype) if t.dtype != dtype else t for t in (a, b))
    batch, height, width, channels = a.shape
    window = numpy.outer(_gaussian_1d(filter_size, filter_sigma), _gaussian_1d(filter_size, filter_sigma))
    kernel = window.reshape(filter_size, filter_size, 1, 1).astype(dtype)

    def per_channel(t):
        return reshape(transpose(t, (0, 3, 1, 2)), (-1, height, width, 1))

    def blur(t):
        return conv(t, kernel, padding="valid", data_format="channels_last")

    a, b = per_channel(a), per_channel(b)
    c1, c2 = (k1 * max_val) ** 2, (k2 * max_val) ** 2
    mu1, mu2 = blur(a), blur(b)
    mu1_sq, mu2_sq, mu12 = mu1 * mu1, mu2 * mu2, mu1 * mu2
    sigma1 = blur(a * a) - mu1_sq
    sigma2 = blur(b * b) - mu2_sq
    sigma12 = blur(a * b) - mu12
    ssim_map = ((2 * mu12 + c1) * (2 * sigma12 + c2)) / ((mu1_sq + mu2_sq + c1) * (sigma1 + sigma2 + c2))
    per_image = mean(reshape(mean(ssim_map, (1, 2, 3)), (batch, channels)), -1)
    if len(getattr(image1, "shape", ())) == 3:
        per_image = reshape(per_image, ())
    return per_image if per_image.dtype == original else per_image.astype(original)
