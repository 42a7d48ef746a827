"""Keras 3's ``SeedGenerator`` and the ``keras.random`` functions that take a
``seed``: randint, shuffle, dropout, and the ``seed=`` argument of normal and
uniform (exported by ``minikeras.random``).

Seeds work as in Keras:

* ``seed=None`` draws from the device's generator, the library stream that
  ``minikeras.random.seed`` (or ``utils.set_random_seed``) makes reproducible;
* ``seed=<int>`` gives the same numbers on every call with that int;
* ``seed=SeedGenerator(...)`` gives new numbers on every call, reproducibly
  from the SeedGenerator's own seed.

Generators are made with the device's array module (``device.xp.random``),
so the same code runs on NumPy and CuPy; only methods both Generators have
(``random``, ``integers``) are used.
"""
import functools
import numbers

import numpy

from minikeras.backend.dtypes import as_numpy_dtype
from minikeras.device import get_device, placement_device
from minikeras.random import streams


class SeedGenerator:
    """A stateful source of seeds (``keras.random.SeedGenerator``).

    Pass it as ``seed=`` to the random functions: each call draws a fresh
    seed from it, so a layer holding one produces new noise every call while
    a given SeedGenerator seed always produces the same sequence.

    Args:
        seed: an int, or None for one drawn from the library's seed stream.

    Example:
        >>> generator = SeedGenerator(42)
        >>> a = randint((3,), 0, 100, seed=generator)
        >>> b = randint((3,), 0, 100, seed=generator)   # different from a
    """

    def __init__(self, seed=None, name=None, **kwargs):
        if seed is None:
            seed = int(streams.host_generator(salt=9973).integers(0, 2**31 - 1))
        _check_int_seed("SeedGenerator", seed)
        self.seed = int(seed)
        self.name = name or "seed_generator"
        self._count = 0

    def next(self):
        """Returns the next seed (an int) and advances the state."""
        value = int(numpy.random.SeedSequence([self.seed, self._count]).generate_state(1)[0])
        self._count += 1
        return value

    @property
    def state(self):
        """``(seed, number of seeds drawn)``."""
        return (self.seed, self._count)

    def get_config(self):
        return {"seed": self.seed, "name": self.name}

    @classmethod
    def from_config(cls, config):
        return cls(**config)

    def __repr__(self):
        return f"SeedGenerator(seed={self.seed}, drawn={self._count})"


def _check_int_seed(function_name, seed):
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or seed < 0:
        raise ValueError(f"{function_name} expects seed to be a non-negative int, a SeedGenerator or None, "
                         f"received {seed!r}.")


def _generator_for(seed, target, function_name):
    """The Generator to draw from on ``target`` for a Keras ``seed`` argument."""
    if seed is None:
        return streams.generator(target)
    if isinstance(seed, SeedGenerator):
        seed = seed.next()
    else:
        _check_int_seed(function_name, seed)
    return target.new_rng(int(seed))  # the device's own kind of Generator


def randint(shape, minval, maxval, dtype="int32", seed=None):
    """Uniform random integers in ``[minval, maxval)`` as a Tensor (``keras.random.randint``).

    Args:
        shape: the result's shape.
        minval: the lowest value (inclusive).
        maxval: the highest value (exclusive); must be > minval.
        dtype: an integer dtype.
        seed: None, an int or a `SeedGenerator` (see the module docstring).

    Raises:
        ValueError: ``maxval <= minval`` or a non-integer dtype.
    """
    dtype = numpy.dtype(dtype)
    if dtype.kind not in "iu":
        raise ValueError(f"randint expects an integer dtype, received {dtype}.")
    if not maxval > minval:
        raise ValueError(f"randint expects maxval > minval, received minval={minval!r}, maxval={maxval!r}.")
    target = _placement(None)
    rng = _generator_for(seed, target, "randint")
    with target.activate():
        data = rng.integers(int(minval), int(maxval), size=_size(shape)).astype(dtype, copy=False)
    return _tensor(data, target)


def shuffle(x, axis=0, seed=None):
    """``x`` with its entries along ``axis`` in random order (``keras.random.shuffle``).

    Args:
        x: a Tensor or array.
        axis: the axis to permute.
        seed: None, an int or a `SeedGenerator`.

    Returns:
        A Tensor on ``x``'s device (gradients flow through the permutation).
    """
    from minikeras import ops

    x = ops.convert_to_tensor(x)
    ndim = len(x.shape)
    if not isinstance(axis, numbers.Integral) or not -ndim <= axis < max(ndim, 1):
        raise ValueError(f"shuffle: axis {axis!r} is out of range for a tensor of shape {tuple(x.shape)}.")
    target = x.device
    rng = _generator_for(seed, target, "shuffle")
    size = x.shape[axis]
    with target.activate():
        # Both NumPy's and CuPy's Generator have random(); CuPy's lacks permutation().
        order = target.xp.argsort(rng.random(size))
    from minikeras.ops.array.indexing import _take_in_range

    return _take_in_range(x, _tensor(order, target), int(axis) % max(ndim, 1))  # a permutation: in range


def dropout(inputs, rate, noise_shape=None, seed=None):
    """Inverted dropout (``keras.random.dropout``): zero each element with
    probability ``rate`` and scale the rest by ``1 / (1 - rate)``.

    Args:
        inputs: a float tensor.
        rate: the drop probability, in ``[0, 1)``.
        noise_shape: the mask's shape, broadcast over ``inputs``.
        seed: None, an int or a `SeedGenerator`.
    """
    from minikeras import ops

    inputs = ops.convert_to_tensor(inputs)
    generator = None if seed is None else _generator_for(seed, inputs.device, "dropout")
    return ops.dropout(inputs, rate, noise_shape=noise_shape, generator=generator)


def with_seed_argument(library_normal, library_uniform):
    """Returns ``normal`` and ``uniform`` that also take Keras's ``seed=``.

    ``seed=None`` calls the library's own functions (the device stream);
    an int or a `SeedGenerator` draws from a generator made from it.
    """

    @functools.wraps(library_normal)
    def normal(shape, mean=0.0, stddev=1.0, dtype=None, seed=None, device=None):
        dtype = as_numpy_dtype(dtype or "float32")
        if seed is None:
            return library_normal(shape, mean, stddev, dtype=dtype, device=device)
        target, size = _placement(device), _size(shape)
        rng = _generator_for(seed, target, "normal")
        with target.activate():
            # standard_normal: CuPy's Generator has no normal().
            draws = rng.standard_normal(size=size, dtype=_draw_dtype(dtype))
            data = (draws * stddev + mean).astype(dtype, copy=False)
        return _tensor(data, target)

    @functools.wraps(library_uniform)
    def uniform(shape, minval=0.0, maxval=1.0, dtype=None, seed=None, device=None):
        dtype = as_numpy_dtype(dtype or "float32")
        if seed is None:
            return library_uniform(shape, minval, maxval, dtype=dtype, device=device)
        target, size = _placement(device), _size(shape)
        rng = _generator_for(seed, target, "uniform")
        with target.activate():
            draws = rng.random(size=size, dtype=_draw_dtype(dtype))
            data = (draws * (maxval - minval) + minval).astype(dtype, copy=False)
        return _tensor(data, target)

    return normal, uniform


def _placement(device):
    return get_device(device) if device is not None else placement_device()


def _size(shape):
    return (int(shape),) if isinstance(shape, numbers.Integral) else tuple(int(size) for size in shape)


def _draw_dtype(dtype):
    # Generators draw float32 or float64 only.
    return dtype if dtype in (numpy.float32, numpy.float64) else numpy.dtype(numpy.float32)


def _tensor(data, target):
    from minikeras.autograd.tensor import from_array

    return from_array(data, target)
