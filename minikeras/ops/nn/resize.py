"""Image resizing (``keras.ops.image.resize``) for ``(batch, height, width,
channels)`` images, bilinear or nearest, with TensorFlow's half-pixel
centres.

Both methods are linear maps applied separately to the rows and the
columns: ``out = A_h @ image @ A_w^T`` per channel, with small interpolation
matrices built on the host. Backward is the same product with the
transposed matrices. Building dense ``(out, in)`` matrices costs
``out * in`` numbers per axis, small next to the image for the sizes
preprocessing uses, and keeps forward and backward each two matrix products.
"""
import numpy

from minikeras.backend.dtypes import is_float_dtype
from minikeras.autograd import Function
from minikeras.ops.math.unary import _as_tensor
from minikeras.ops.array.dtype import cast

__all__ = ["resize"]

_INTERPOLATIONS = ("bilinear", "nearest")


def interpolation_matrix(out_size, in_size, interpolation):
    """The ``(out_size, in_size)`` float64 matrix resizing one axis.

    Output pixel ``i`` samples the input at ``(i + 0.5) * in / out - 0.5``
    (half-pixel centres, as ``tf.image.resize``): bilinear weights between
    the two neighbours (clamped at the edges), or the nearest pixel
    ``floor((i + 0.5) * in / out)``.
    """
    scale = in_size / out_size
    matrix = numpy.zeros((out_size, in_size))
    rows = numpy.arange(out_size)
    if interpolation == "nearest":
        source = numpy.minimum(numpy.floor((rows + 0.5) * scale).astype(int), in_size - 1)
        matrix[rows, source] = 1.0
        return matrix
    position = numpy.clip((rows + 0.5) * scale - 0.5, 0.0, in_size - 1)
    low = numpy.floor(position).astype(int)
    high = numpy.minimum(low + 1, in_size - 1)
    fraction = position - low
    numpy.add.at(matrix, (rows, low), 1.0 - fraction)
    numpy.add.at(matrix, (rows, high), fraction)
    return matrix


class Resize(Function):
    """``out[n, i, j, c] = sum_hw A_h[i, h] x[n, h, w, c] A_w[j, w]``."""

    half_in_float32 = True  # einsum: CuPy 14 contracts no bfloat16 (batched matmul), NumPy has no 16-bit BLAS

    def __init__(self, rows, columns):
        self.rows, self.columns = rows, columns  # host float64 matrices

    def _matrices(self, dtype):
        xp = self.device.xp
        return xp.asarray(self.rows, dtype=dtype), xp.asarray(self.columns, dtype=dtype)

    def forward(self, x):
        xp = self.device.xp
        rows, columns = self._matrices(x.dtype)
        return xp.ascontiguousarray(xp.einsum("ih,nhwc,jw->nijc", rows, x, columns, optimize=True))

    def backward(self, grad):
        xp = self.device.xp
        rows, columns = self._matrices(grad.dtype)
        return (xp.ascontiguousarray(xp.einsum("ih,nijc,jw->nhwc", rows, grad, columns, optimize=True)),)


def resize(images, size, interpolation="bilinear"):
    """Resize ``(batch, height, width, channels)`` images to ``size``.

    Args:
        images: a 4-D channels-last Tensor (integers are resized as float32).
        size: ``(height, width)`` of the output.
        interpolation: "bilinear" (default) or "nearest".

    Returns:
        A ``(batch, size[0], size[1], channels)`` Tensor, differentiable in
        ``images``.

    Raises:
        ValueError: images are not 4-D, size is not two positive ints, or
            the interpolation is unknown.
    """
    images = _as_tensor("resize", images)
    if images.ndim != 4:
        raise ValueError(f"resize expects (batch, height, width, channels) images, received shape {images.shape}.")
    if (not isinstance(size, (list, tuple)) or len(size) != 2
            or any(isinstance(s, bool) or not isinstance(s, (int, numpy.integer)) or s <= 0 for s in size)):
        raise ValueError(f"resize: size must be two positive ints (height, width), received size={size!r}.")
    if interpolation not in _INTERPOLATIONS:
        raise ValueError(f"resize: interpolation must be one of {_INTERPOLATIONS}, received {interpolation!r}.")
    if not is_float_dtype(images.dtype):
        images = cast(images, "float32")
    rows = interpolation_matrix(int(size[0]), images.shape[1], interpolation)
    columns = interpolation_matrix(int(size[1]), images.shape[2], interpolation)
    return Resize(rows, columns).apply(images)
