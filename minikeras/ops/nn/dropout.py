"""Inverted dropout: zero each element with probability ``rate`` and scale the
kept ones by ``1 / (1 - rate)``, so the expected value is unchanged and
inference needs no rescaling."""

__all__ = ["dropout"]

import numbers

import numpy

from minikeras.backend.dtypes import is_float_dtype
from minikeras import random
from minikeras.autograd import Function
from minikeras.kernels import captured_random
from minikeras.ops._checks import shape_of
from minikeras._support.argument_validation import validate_shape


class Dropout(Function):
    """Multiplies by a random scaled mask, the only array kept for backward."""

    def __init__(self, rate, noise_shape, generator):
        self.rate, self.noise_shape, self.generator = rate, noise_shape, generator

    def forward(self, x):
        xp = self.device.xp
        generator = self.generator if self.generator is not None else random.generator(self.device)
        # Generators draw float32 or float64 only; draw float32 for float16 inputs.
        draw_dtype = x.dtype if x.dtype in (numpy.float32, numpy.float64) else numpy.float32
        # asarray: a host generator given by the caller draws on the host.
        # (inside a captured step: the generator's counter stream, kernels/captured_random.py)
        uniform = self.device.asarray(captured_random.draw(generator, self.device, "random", self.noise_shape,
                                                           draw_dtype))
        # The scaled mask in x's dtype: kept -> 1/(1-rate), dropped -> 0.
        mask = xp.multiply(uniform >= self.rate, 1.0 / (1.0 - self.rate), dtype=x.dtype)
        if self.needs_input_grad[0]:
            self.save_for_backward(mask)
        return x * mask

    def backward(self, grad):
        (mask,) = self.saved
        return grad * mask


def dropout(x, rate, noise_shape=None, generator=None):
    """Inverted dropout of ``x``.

    Args:
        x: a floating-point tensor.
        rate: the probability of dropping an element, in ``[0, 1)``; 0
            returns ``x`` itself.
        noise_shape: the shape of the mask, broadcast over ``x`` (e.g.
            ``(N, 1, 1, C)`` drops whole channels, as ``SpatialDropout2D``);
            ``None`` entries take ``x``'s size. Default: ``x``'s shape.
        generator: a NumPy (CPU) or CuPy (GPU) ``Generator`` to draw the
            mask from; default: ``minikeras.random.generator`` of the op's
            device, so ``minikeras.random.seed`` makes masks reproducible.

    Returns:
        A tensor like ``x``; the gradient is the same scaled mask.

    Raises:
        ValueError: ``rate`` outside ``[0, 1)`` or a ``noise_shape`` that does
            not broadcast to ``x``.
    """
    if isinstance(rate, bool) or not isinstance(rate, numbers.Real) or not 0 <= rate < 1:
        raise ValueError(f"dropout: rate must be a number in [0, 1), received {rate!r}.")
    dtype = getattr(x, "dtype", None)
    if dtype is None or not is_float_dtype(dtype):
        raise TypeError(f"dropout expects a floating-point tensor, received dtype {dtype}.")
    if rate == 0:
        return x
    shape = shape_of(x)
    if noise_shape is None:
        noise_shape = shape
    else:
        # None entries stand for the input's size (Keras); the others are sizes.
        if not isinstance(noise_shape, (tuple, list)):
            raise TypeError(f"dropout: noise_shape must be a tuple of ints or None, received {noise_shape!r}.")
        given = [entry for entry in noise_shape if entry is not None]
        validate_shape("dropout", given, name="noise_shape")
        noise_shape = tuple(noise_shape)
        if len(noise_shape) != len(shape):
            raise ValueError(
                f"dropout: noise_shape {noise_shape} must have one entry per axis of the input shape {shape}."
            )
        noise_shape = tuple(size if entry is None else entry for entry, size in zip(noise_shape, shape))
        if any(not isinstance(entry, (int, numpy.integer)) or entry not in (1, size)
               for entry, size in zip(noise_shape, shape)):
            raise ValueError(
                f"dropout: noise_shape {noise_shape} does not broadcast to the input shape {shape} "
                "(each entry must be 1, None, or the input's size)."
            )
        noise_shape = tuple(int(entry) for entry in noise_shape)
    return Dropout(float(rate), noise_shape, generator).apply(x)
