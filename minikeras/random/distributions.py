"""Keras 3's other ``keras.random`` draws: beta, binomial, categorical, gamma
and truncated_normal (re-exported by ``minikeras.random``).

Seeds work as in ``seed_generator`` (None: the device stream; an int: the
same numbers every call; a SeedGenerator: a new, reproducible draw each
call). Draws use only methods that NumPy's and CuPy's Generators share
(``gamma``, ``beta``, ``binomial``, ``random``, ``standard_normal``), on the
device the result lives on.
"""
import numpy

from minikeras.random.seed_generator import _draw_dtype, _generator_for, _placement, _size, _tensor
from minikeras.backend.dtypes import as_numpy_dtype, is_float_dtype
from minikeras.autograd.tensor import array_of

__all__ = ["beta", "binomial", "categorical", "gamma", "truncated_normal"]


def _float_dtype(function_name, dtype):
    dtype = as_numpy_dtype(dtype or "float32")
    if not is_float_dtype(dtype):
        raise ValueError(f"{function_name} expects a floating-point dtype, received {dtype}.")
    return dtype


def _parameter(target, value, dtype=numpy.float64):
    """A distribution parameter as a number or an array on ``target``."""
    if isinstance(value, (int, float, numpy.number)):
        return float(value) if dtype == numpy.float64 else value
    data = array_of(value)
    return target.asarray(data).astype(dtype)


def gamma(shape, alpha, dtype=None, seed=None):
    """Samples of the Gamma distribution with shape ``alpha`` and scale 1
    (``keras.random.gamma``).

    Args:
        shape: the result's shape.
        alpha: the concentration (a float, or values broadcast to ``shape``).
        dtype: a float dtype (default float32).
        seed: None, an int or a SeedGenerator.
    """
    dtype = _float_dtype("gamma", dtype)
    target, size = _placement(None), _size(shape)
    rng = _generator_for(seed, target, "gamma")
    with target.activate():
        data = rng.standard_gamma(_parameter(target, alpha), size=size).astype(dtype, copy=False)
    return _tensor(data, target)


def beta(shape, alpha, beta, dtype=None, seed=None):
    """Samples of the Beta distribution (``keras.random.beta``), drawn as
    ``X / (X + Y)`` with ``X ~ Gamma(alpha)`` and ``Y ~ Gamma(beta)``.

    Args:
        shape: the result's shape.
        alpha, beta: the two concentrations (floats or broadcastable values).
        dtype: a float dtype (default float32).
        seed: None, an int or a SeedGenerator.
    """
    dtype = _float_dtype("beta", dtype)
    target, size = _placement(None), _size(shape)
    rng = _generator_for(seed, target, "beta")
    with target.activate():
        first = rng.standard_gamma(_parameter(target, alpha), size=size)
        second = rng.standard_gamma(_parameter(target, beta), size=size)
        data = (first / (first + second)).astype(dtype, copy=False)
    return _tensor(data, target)


def binomial(shape, counts, probabilities, dtype=None, seed=None):
    """Samples of the Binomial distribution: the number of successes in
    ``counts`` trials of success probability ``probabilities``
    (``keras.random.binomial``), returned as floats as Keras does.

    Args:
        shape: the result's shape.
        counts: the number of trials (an int or broadcastable values).
        probabilities: the success probability (a float or broadcastable values).
        dtype: a float dtype (default float32).
        seed: None, an int or a SeedGenerator.
    """
    dtype = _float_dtype("binomial", dtype)
    target, size = _placement(None), _size(shape)
    rng = _generator_for(seed, target, "binomial")
    with target.activate():
        trials = counts if isinstance(counts, (int, numpy.integer)) else _parameter(target, counts, numpy.int64)
        data = rng.binomial(trials, _parameter(target, probabilities), size=size).astype(dtype)
    return _tensor(data, target)


def categorical(logits, num_samples, dtype="int32", seed=None):
    """Class ids drawn from the categorical distributions given by ``logits``
    (``keras.random.categorical``): the Gumbel-max trick, the argmax of
    ``logits + Gumbel noise``.

    Args:
        logits: ``(batch, classes)`` unnormalized log-probabilities.
        num_samples: how many draws per row.
        dtype: an integer dtype (default int32).
        seed: None, an int or a SeedGenerator.

    Returns:
        A ``(batch, num_samples)`` integer Tensor.

    Raises:
        ValueError: ``logits`` is not 2-D.
    """
    from minikeras import ops

    logits = ops.convert_to_tensor(logits)
    if logits.ndim != 2:
        raise ValueError(f"`logits` should be a 2-D tensor with shape [batch_size, num_classes]. Received: "
                         f"logits={tuple(logits.shape)}")
    dtype = numpy.dtype(dtype)
    if dtype.kind not in "iu":
        raise ValueError(f"categorical expects an integer dtype, received {dtype}.")
    target = logits.device
    rng = _generator_for(seed, target, "categorical")
    batch, classes = logits.shape
    with target.activate():
        xp = target.xp
        uniform = rng.random(size=(batch, int(num_samples), classes))
        tiny = numpy.finfo(numpy.float64).tiny
        gumbel = -xp.log(-xp.log(xp.maximum(uniform, tiny)))
        scores = logits.data.astype(numpy.float64)[:, None, :] + gumbel
        data = scores.argmax(axis=-1).astype(dtype)
    return _tensor(data, target)


def truncated_normal(shape, mean=0.0, stddev=1.0, dtype=None, seed=None):
    """Normal samples with those more than two standard deviations from the
    mean redrawn (``keras.random.truncated_normal``).

    Args:
        shape: the result's shape.
        mean, stddev: the distribution's mean and standard deviation.
        dtype: a float dtype (default float32).
        seed: None, an int or a SeedGenerator.
    """
    dtype = _float_dtype("truncated_normal", dtype)
    target, size = _placement(None), _size(shape)
    rng = _generator_for(seed, target, "truncated_normal")
    with target.activate():
        xp = target.xp
        draws = rng.standard_normal(size=size, dtype=_draw_dtype(dtype))
        outside = xp.abs(draws) > 2.0
        # Each round redraws every outside value (about 4.6% of them); the
        # loop ends after a handful of rounds (one host read each).
        while target.item(outside.any()):
            fresh = rng.standard_normal(size=size, dtype=_draw_dtype(dtype))
            draws = xp.where(outside, fresh, draws)
            outside = xp.abs(draws) > 2.0
        data = (draws * stddev + mean).astype(dtype, copy=False)
    return _tensor(data, target)
