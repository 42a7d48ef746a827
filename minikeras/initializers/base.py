"""What every initializer shares: the ``Initializer`` base class, Keras's
fan computation and the argument checks.
"""

__all__ = ["Initializer", "compute_fans"]

import math

import numpy

from minikeras.backend.dtypes import as_numpy_dtype, is_float_dtype

from minikeras._registry import Configurable


def compute_fans(shape):
    """``(fan_in, fan_out)`` of a weight shape, as Keras computes them.

    Args:
        shape: the weight's shape. Scalars give ``(1, 1)``, vectors
            ``(n, n)``, matrices ``(rows, cols)``; higher ranks are read as
            convolution kernels ``(*window, in, out)``.

    Returns:
        A pair of ints.
    """
    shape = tuple(int(size) for size in shape)
    if len(shape) < 1:
        return 1, 1
    if len(shape) == 1:
        return shape[0], shape[0]
    if len(shape) == 2:
        return shape[0], shape[1]
    receptive_field = math.prod(shape[:-2])
    return shape[-2] * receptive_field, shape[-1] * receptive_field


def _check_shape(name, shape):
    if isinstance(shape, (int, numpy.integer)):
        shape = (shape,)
    try:
        shape = tuple(int(size) for size in shape)
    except TypeError:
        raise TypeError(f"{name}: shape must be a tuple of ints, received {shape!r}.") from None
    if any(size < 0 for size in shape):
        raise ValueError(f"{name}: shape sizes must be non-negative, received {shape}.")
    return shape


def _float_dtype(name, dtype):
    dtype = as_numpy_dtype(dtype or "float32")
    if not is_float_dtype(dtype):
        raise ValueError(f"{name}: random values need a floating dtype, received dtype={dtype.name}.")
    return dtype


def _check_seed(seed):
    if seed is None:
        return None
    if isinstance(seed, bool) or not isinstance(seed, (int, numpy.integer)) or seed < 0:
        raise ValueError(f"An initializer seed must be None or a non-negative int, received seed={seed!r}.")
    return int(seed)


def _positive(class_name, argument, value):
    try:
        value = float(value)
    except (TypeError, ValueError):
        raise TypeError(f"{class_name}: {argument} must be a number, received {value!r}.") from None
    if not value > 0 or not math.isfinite(value):
        raise ValueError(f"{class_name}: {argument} must be a positive number, received {argument}={value}.")
    return value


class Initializer(Configurable):
    """Base class: ``init(shape, dtype="float32")`` returns a NumPy array.

    Subclasses implement ``__call__`` and ``get_config`` (the constructor
    arguments); ``from_config`` rebuilds an equal initializer.
    """

    def __call__(self, shape, dtype="float32"):  # pragma: no cover - abstract
        raise NotImplementedError
