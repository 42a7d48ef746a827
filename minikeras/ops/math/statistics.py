"""Statistics built from the differentiable reductions and ``sort``:
amax, amin, average, ptp, median, quantile, percentile, the nan-ignoring
reductions, moments, corrcoef, histogram, bincount, trapezoid, correlate.

Quantiles sort along the reduced axes and interpolate between two order
statistics (NumPy's methods ``linear``, ``lower``, ``higher``,
``midpoint``, ``nearest``), so their gradient goes to the one or two
elements each quantile reads, as TensorFlow's/JAX's. The nan variants
replace NaNs by a neutral value (0 for sums, +-inf for extremes) before
reducing; NaNs get no gradient.
"""

__all__ = ["amax", "amin", "average", "ptp", "median", "quantile", "percentile", "nansum", "nanmean",
           "nanmax", "nanmin", "nanprod", "nanvar", "nanstd", "nanargmax", "nanargmin", "nanmedian",
           "nanquantile", "nanpercentile", "moments", "corrcoef", "histogram", "bincount", "trapezoid",
           "correlate"]

import math

import numpy

from minikeras.autograd import Tensor
from minikeras.backend.dtypes import is_float_dtype
from minikeras.ops._checks import normalize_axis
from minikeras.ops._promotion import result_type
from minikeras.ops.array.indexing import _take_in_range, getitem
from minikeras.ops.array.reshaping import expand_dims, reshape, squeeze, transpose
from minikeras.ops.array.sorting import sort
from minikeras.ops.math._elementwise import call_without_gradient, detached, operand
from minikeras.ops.math._operands import _as_tensor
from minikeras.ops.math.compare import where
from minikeras.ops.math.predicates import isnan
from minikeras.ops.reduce import argmax, argmin, max, mean, min, prod, sum
from minikeras._support.argument_validation import validate_axis, validate_flag, validate_int, validate_option

def amax(x, axis=None, keepdims=False):
    """Maximum over ``axis`` (``keras.ops.amax``: :func:`max` without ``initial``)."""
    return max(x, axis, keepdims)


def amin(x, axis=None, keepdims=False):
    """Minimum over ``axis`` (``keras.ops.amin``: :func:`min` without ``initial``)."""
    return min(x, axis, keepdims)


def _tensor(op_name, x):
    return _as_tensor(op_name, operand(op_name, x))


def average(x, axis=None, weights=None):
    """The weighted mean along ``axis`` (``weights`` of x's shape, or 1-D along ``axis``)."""
    x = _tensor("average", x)
    if weights is None:
        return mean(x, axis)
    weights = _tensor("average", weights)
    if weights.shape != x.shape:
        if axis is None or weights.ndim != 1:
            raise ValueError(f"average: weights must have x's shape {x.shape}, or be 1-D along a single axis; "
                             f"received shape {weights.shape} with axis={axis!r}.")
        axis = normalize_axis("average", axis, x.ndim)[0]
        weights = reshape(weights, tuple(-1 if i == axis else 1 for i in range(x.ndim)))
    from minikeras.ops.creation import ones_like

    return sum(x * weights, axis) / sum(weights * ones_like(x), axis)


def ptp(x, axis=None, keepdims=False):
    """Range (``max - min``) along ``axis``."""
    x = _tensor("ptp", x)
    return max(x, axis, keepdims) - min(x, axis, keepdims)


_METHODS = ("linear", "lower", "higher", "midpoint", "nearest")


def _moved_to_last(x, axes):
    """``x`` with ``axes`` merged into one last axis (and the kept axes in order)."""
    kept = [i for i in range(x.ndim) if i not in axes]
    moved = transpose(x, kept + list(axes)) if list(axes) != list(range(x.ndim - len(axes), x.ndim)) else x
    return reshape(moved, tuple(x.shape[i] for i in kept) + (-1,))


def _keep_dims(result, x, axes, leading):
    shape = tuple(1 if i in axes else size for i, size in enumerate(x.shape))
    return reshape(result, tuple(leading) + shape)


def quantile(x, q, axis=None, method="linear", keepdims=False):
    """The ``q``-th quantiles (``q`` in [0, 1], a number or an array of any rank) along ``axis``.

    Returns:
        A tensor with ``q``'s shape first, then the kept axes (NumPy's layout).

    Raises:
        ValueError: ``q`` outside [0, 1] or an unknown ``method``.
    """
    return _quantile("quantile", x, q, axis, method, keepdims, 1.0)


def percentile(x, q, axis=None, method="linear", keepdims=False):
    """The ``q``-th percentiles (``q`` in [0, 100]) along ``axis``; see :func:`quantile`."""
    return _quantile("percentile", x, q, axis, method, keepdims, 100.0)


def _quantile(op_name, x, q, axis, method, keepdims, scale, ignore_nan=False):
    validate_option(op_name, "method", method, _METHODS)
    x = _tensor(op_name, x)
    keepdims = validate_flag(op_name, "keepdims", keepdims)
    if not is_float_dtype(x.dtype):
        x = x.astype("float32")
    q_host = numpy.asarray(q.numpy() if isinstance(q, Tensor) else q)
    if q_host.dtype.kind not in "iuf":
        raise TypeError(f"{op_name}: q must be a number or an array of numbers, received {q!r}.")
    q_host = q_host.astype("float64") / scale
    if not numpy.all((q_host >= 0) & (q_host <= 1)):
        raise ValueError(f"{op_name}: q must be numbers within [0, {scale:g}], received {q!r}.")
    axes = normalize_axis(op_name, axis, x.ndim)
    rows = _moved_to_last(x, axes)
    n = rows.shape[-1]
    if q_host.ndim == 1 and q_host.size == 0:  # no quantile asked: an empty result (NumPy's, Keras's)
        from minikeras.ops.creation import zeros

        kept = tuple(1 if i in axes else size for i, size in enumerate(x.shape)) if keepdims else rows.shape[:-1]
        return zeros((0,) + tuple(kept), str(x.dtype))
    if ignore_nan:
        return _nan_quantile(op_name, rows, q_host, method, x, axes, keepdims)
    if n == 0:
        raise ValueError(f"{op_name}: the reduced axes are empty (shape {x.shape}): there is no value to take "
                         f"quantiles of.")
    ordered = sort(rows, axis=-1)
    results = [_interpolate(ordered, float(level), n, method) for level in q_host.reshape(-1)]
    if is_float_dtype(x.dtype) and n:  # a NaN anywhere in a row makes all its quantiles NaN (NumPy, Keras)
        has_nan = max(isnan(rows), -1)
        results = [where(has_nan, math.nan, result) for result in results]
    return _assemble(results, q_host, x, axes, keepdims)


def _interpolate(ordered, level, n, method):
    position = level * (n - 1)
    lower, upper = math.floor(position), math.ceil(position)
    if method == "lower" or (method == "nearest" and _round_half_even(position) == lower):
        return ordered[..., lower]
    if method in ("higher", "nearest"):
        return ordered[..., upper]
    low, high = ordered[..., lower], ordered[..., upper]
    if lower == upper:
        return low
    fraction = 0.5 if method == "midpoint" else position - lower
    return low + (high - low) * fraction


def _flip(x):
    return getitem(x, (slice(None, None, -1),))


def _round_half_even(value):
    return round(value)


def _assemble(results, q_host, x, axes, keepdims):
    from minikeras.ops.array.joining import stack

    result = stack(results, 0) if q_host.ndim else results[0]
    if q_host.ndim > 1:  # q's own shape first, as NumPy's
        result = reshape(result, q_host.shape + tuple(result.shape[1:]))
    if keepdims:
        return _keep_dims(result, x, axes, q_host.shape)
    return result


def _nan_quantile(op_name, rows, q_host, method, x, axes, keepdims):
    # NaNs sort last; each row's count of real values sets its own positions.
    if rows.shape[-1] == 0:  # no value at all: NaN, as a row of NaNs (Keras)
        from minikeras.ops.creation import full

        empty = full(rows.shape[:-1], math.nan, dtype=str(rows.dtype))
        return _assemble([empty] * q_host.size, q_host, x, axes, keepdims)
    ordered = sort(rows, axis=-1)
    valid = (1 - isnan(ordered).astype(ordered.dtype)).sum(axis=-1)
    results = []
    for level in q_host.reshape(-1):
        position = float(level) * (valid - 1)
        lower_index = _floor_index(position)
        upper_index = _ceil_index(position)
        low = _gather_last(ordered, lower_index)
        high = _gather_last(ordered, upper_index)
        fraction = position - lower_index.astype(position.dtype)
        if method == "lower":
            value = low
        elif method == "higher":
            value = high
        elif method == "midpoint":
            value = where(upper_index == lower_index, low, (low + high) * 0.5)
        elif method == "nearest":
            value = where(fraction > 0.5, high, low)
        else:
            value = low + (high - low) * fraction
        results.append(where(valid == 0, math.nan, value))
    return _assemble(results, q_host, x, axes, keepdims)


def _floor_index(position):
    return call_without_gradient("floor", lambda xp, p: xp.maximum(xp.floor(p), 0).astype("int64"), position)


def _ceil_index(position):
    return call_without_gradient("ceil", lambda xp, p: xp.maximum(xp.ceil(p), 0).astype("int64"), position)


def _gather_last(ordered, index):
    from minikeras.ops.array.sorting import _take_along_axis

    return squeeze(_take_along_axis(ordered, expand_dims(index, -1), -1, checked=False), -1)


def median(x, axis=None, keepdims=False):
    """The median along ``axis`` (the mean of the two middle values for even counts)."""
    return quantile(x, 0.5, axis=axis, keepdims=keepdims)


def nanquantile(x, q, axis=None, method="linear", keepdims=False):
    """:func:`quantile` ignoring NaNs (NaN where a row holds only NaNs)."""
    return _quantile("nanquantile", x, q, axis, method, keepdims, 1.0, ignore_nan=True)


def nanpercentile(x, q, axis=None, method="linear", keepdims=False):
    """:func:`percentile` ignoring NaNs."""
    return _quantile("nanpercentile", x, q, axis, method, keepdims, 100.0, ignore_nan=True)


def nanmedian(x, axis=None, keepdims=False):
    """The median ignoring NaNs."""
    return nanquantile(x, 0.5, axis=axis, keepdims=keepdims)


def _without_nan(op_name, x, fill):
    x = _tensor(op_name, x)
    if not is_float_dtype(x.dtype) and x.dtype.kind != "c":
        return x, None
    missing = isnan(x)
    return where(missing, fill, x), missing


def nansum(x, axis=None, keepdims=False):
    """Sum ignoring NaNs."""
    x, _ = _without_nan("nansum", x, 0)
    return sum(x, axis, keepdims)


def nanprod(x, axis=None, keepdims=False):
    """Product ignoring NaNs (Keras's dtype: int32 stays int32, as ``ops.prod``)."""
    x, _ = _without_nan("nanprod", x, 1)
    return prod(x, axis, keepdims)


def nanmean(x, axis=None, keepdims=False):
    """Mean ignoring NaNs (NaN where all are NaN)."""
    filled, missing = _without_nan("nanmean", x, 0)
    if missing is None:
        return mean(filled, axis, keepdims)
    count = sum(1 - missing.astype(filled.dtype), axis, keepdims)
    return sum(filled, axis, keepdims) / count


def nanvar(x, axis=None, keepdims=False):
    """Population variance ignoring NaNs."""
    filled, missing = _without_nan("nanvar", x, 0)
    keepdims = validate_flag("nanvar", "keepdims", keepdims)
    if missing is None:
        from minikeras.ops.reduce import var

        return var(filled, axis, keepdims)
    present = 1 - missing.astype(filled.dtype)
    count = sum(present, axis, True)
    centered = (filled - sum(filled, axis, True) / count) * present
    result = sum(centered * centered, axis, True) / count
    return result if keepdims else squeeze(result, normalize_axis("nanvar", axis, filled.ndim))


def nanstd(x, axis=None, keepdims=False):
    """Population standard deviation ignoring NaNs."""
    return nanvar(x, axis, keepdims) ** 0.5


def _all_nan(missing, axis, keepdims):
    """Where every entry of a reduced slice is NaN (None when ``x`` cannot hold NaN)."""
    if missing is None:
        return None
    return min(missing, axis, keepdims)


def nanmax(x, axis=None, keepdims=False):
    """Maximum ignoring NaNs (NaN where a slice holds only NaNs, as NumPy and Keras)."""
    filled, missing = _without_nan("nanmax", x, -math.inf)
    result = max(filled, axis, keepdims)
    empty = _all_nan(missing, axis, keepdims)
    return result if empty is None else where(empty, math.nan, result)


def nanmin(x, axis=None, keepdims=False):
    """Minimum ignoring NaNs (NaN where a slice holds only NaNs, as NumPy and Keras)."""
    filled, missing = _without_nan("nanmin", x, math.inf)
    result = min(filled, axis, keepdims)
    empty = _all_nan(missing, axis, keepdims)
    return result if empty is None else where(empty, math.nan, result)


def nanargmax(x, axis=None, keepdims=False):
    """Index of the maximum ignoring NaNs (int32, as Keras): -1 where a slice holds
    only NaNs, as Keras's TensorFlow and JAX backends (NumPy raises there)."""
    filled, missing = _without_nan("nanargmax", x, -math.inf)
    result = argmax(filled, axis, keepdims).astype("int32")
    empty = _all_nan(missing, axis, keepdims)
    return result if empty is None else where(empty, -1, result).astype("int32")


def nanargmin(x, axis=None, keepdims=False):
    """Index of the minimum ignoring NaNs (int32, as Keras): -1 where a slice holds only NaNs."""
    filled, missing = _without_nan("nanargmin", x, math.inf)
    result = argmin(filled, axis, keepdims).astype("int32")
    empty = _all_nan(missing, axis, keepdims)
    return result if empty is None else where(empty, -1, result).astype("int32")


def moments(x, axes, keepdims=False, synchronized=False):
    """Mean and (population) variance over ``axes``: ``(mean, variance)``.

    ``synchronized`` (a distributed-training flag in Keras) changes nothing on one replica.

    Raises:
        TypeError: complex ``x`` (Keras's backends define its variance differently).
    """
    # Complex refused: TensorFlow's variance is the mean of |x - mean|**2, JAX's of (x - mean)**2.
    x = _as_tensor("moments", operand("moments", x), allow_complex=False)
    validate_flag("moments", "synchronized", synchronized)  # a distributed-training flag: one replica here
    mean_keep = mean(x, axes, True)
    centered = x - mean_keep
    variance = mean(centered * centered, axes, keepdims)
    return (mean_keep if keepdims else squeeze(mean_keep, normalize_axis("moments", axes, x.ndim))), variance


def corrcoef(x):
    """Pearson correlation coefficients of the rows of ``x`` (each row a variable; a 0-d or 1-D ``x`` is one
    variable, as NumPy's: its coefficient is NaN for a single observation, 0 / 0)."""
    x = _tensor("corrcoef", x)
    if x.ndim > 2:
        raise ValueError(f"corrcoef expects a 0-D, 1-D or 2-D tensor (one variable per row), received shape "
                         f"{x.shape}.")
    if not is_float_dtype(x.dtype):
        x = x.astype("float32")
    if x.ndim < 2:
        x = reshape(x, (1, -1))
    centered = x - mean(x, 1, True)
    from minikeras.ops.math.matmul import matmul

    covariance = matmul(centered, transpose(centered))
    diagonal = (centered * centered).sum(axis=1) ** 0.5
    result = covariance / expand_dims(diagonal, 1) / expand_dims(diagonal, 0)
    return result if result.shape != (1, 1) else reshape(result, ())


def histogram(x, bins=10, range=None):  # noqa: A002  (keras.ops name)
    """Counts of ``x`` in ``bins`` equal bins over ``range`` (default: x's min to max).

    Returns:
        ``(counts, bin_edges)``; counts are in x's dtype, as Keras's.
    """
    x = detached(_tensor("histogram", x))
    bins = validate_int("histogram", "bins", bins, minimum=1)
    if x.ndim != 1:
        raise ValueError(f"histogram expects a 1-D tensor, received shape {x.shape}.")
    if range is not None and (not isinstance(range, (tuple, list)) or len(range) != 2 or not all(
            isinstance(end, (int, float, numpy.integer, numpy.floating)) and not isinstance(end, bool)
            and math.isfinite(end) for end in range) or range[0] > range[1]):
        raise ValueError(f"histogram: range must be (min, max) with min <= max, received {range!r}.")
    def compute(xp, a):
        if range is None and a.size and not bool(xp.isfinite(a).all()):
            # No finite range to split (TensorFlow's answer: no counts, NaN edges).
            return xp.zeros(bins, a.dtype), xp.full(bins + 1, xp.nan, a.dtype)
        counts, edges = xp.histogram(a, bins=bins, range=range)
        return counts.astype(a.dtype), edges.astype(a.dtype)

    return call_without_gradient("histogram", compute, x)


def bincount(x, weights=None, minlength=0, sparse=False):
    """Counts (or weight sums) of each non-negative integer in ``x``; no gradient.

    ``x`` is 1-D, or 2-D for one count per row (each row as long as the
    largest id of the whole batch allows, or ``minlength``), as Keras's.
    Bools count as 0 and 1 (NumPy). The dtype is int32 without weights, else
    Keras's promotion of ``x``'s and the weights' dtypes.

    Raises:
        ValueError: ``sparse=True`` (minikeras has no sparse tensors), ``x``
            is not 1-D or 2-D, or it holds a negative value (the same message
            on every device: NumPy's and CuPy's differ).
    """
    if validate_flag("bincount", "sparse", sparse):
        raise ValueError("bincount: sparse=True is not supported (minikeras has no sparse tensors).")
    minlength = validate_int("bincount", "minlength", minlength, minimum=0)
    x = _tensor("bincount", x)
    if x.dtype == numpy.bool_:
        x = x.astype("int32")
    if x.ndim not in (1, 2) or x.dtype.kind not in "iu":
        raise ValueError(f"bincount expects a 1-D integer tensor (2-D: one count per row), received shape {x.shape} "
                         f"of dtype {x.dtype}.")
    high = -1
    if x.size:
        low, high = x.device.bounds(x.data)  # one transfer (CuPy's bincount reads the minimum back too)
        if low < 0:
            raise ValueError(f"bincount: x must hold non-negative integers, received {low}.")
    length = high + 1 if high + 1 > minlength else minlength  # (``max`` here is the reduction op)
    if weights is None:
        return call_without_gradient("bincount", lambda xp, a: _counts(xp, a, None, length).astype("int32"), x)
    weights = _tensor("bincount", weights)
    if weights.shape != x.shape:
        raise ValueError(f"bincount: weights must have the shape of x {x.shape}, received {weights.shape}.")
    dtype = result_type(x.dtype, weights.dtype)
    return call_without_gradient("bincount", lambda xp, a, w: _counts(xp, a, w, length).astype(dtype), x, weights)


def _counts(xp, ids, weights, length):
    """``xp.bincount`` of each row of 2-D ``ids`` (one flat count of ids offset by row), or of 1-D ``ids``."""
    if ids.ndim == 1:
        return xp.bincount(ids, weights=weights, minlength=length)
    rows = ids.shape[0]
    offsets = ids.astype("int64") + (xp.arange(rows, dtype="int64") * length)[:, None]
    flat = xp.bincount(offsets.reshape(-1), weights=None if weights is None else weights.reshape(-1),
                       minlength=rows * length)
    return flat.reshape(rows, length)


def trapezoid(y, x=None, dx=1.0, axis=-1):
    """Integral of ``y`` along ``axis`` by the trapezoidal rule (samples at ``x``, or spaced ``dx``)."""
    y = _tensor("trapezoid", y)
    if not is_float_dtype(y.dtype) and y.dtype.kind != "c":  # (complex samples integrate as they are)
        y = y.astype("float32")
    axis = validate_axis("trapezoid", axis, y.ndim)
    head = (slice(None),) * axis
    average_height = (getitem(y, head + (slice(1, None),)) + getitem(y, head + (slice(None, -1),))) * 0.5
    if x is None:
        return sum(average_height, axis) * dx
    x = _tensor("trapezoid", x)
    if x.ndim == 1:
        widths = x[1:] - x[:-1]
        widths = reshape(widths, tuple(-1 if i == axis else 1 for i in range(y.ndim)))
    else:
        widths = getitem(x, head + (slice(1, None),)) - getitem(x, head + (slice(None, -1),))
    return sum(average_height * widths, axis)


def correlate(x1, x2, mode="valid"):
    """Cross-correlation of two 1-D tensors (``numpy.correlate``; modes valid, same, full)."""
    validate_option("correlate", "mode", mode, ("valid", "same", "full"))
    a, v = _tensor("correlate", x1), _tensor("correlate", x2)
    if a.ndim != 1 or v.ndim != 1 or a.shape[0] == 0 or v.shape[0] == 0:
        raise ValueError(f"correlate expects two non-empty 1-D tensors, received shapes {a.shape} and {v.shape}.")
    from minikeras.ops.array.padding import pad

    n, m = a.shape[0], v.shape[0]
    total = {"valid": 0, "same": m - 1, "full": 2 * (m - 1)}[mode]
    left = {"valid": 0, "same": m // 2, "full": m - 1}[mode]
    if n < m:
        # The shorter input slides over the longer one, as numpy.correlate.
        return _flip(correlate(v, a, mode))
    padded = pad(a, [(left, total - left)]) if total else a
    length = padded.shape[0] - m + 1
    windows = _take_in_range(padded, numpy.arange(length)[:, None] + numpy.arange(m)[None, :], 0)
    return (windows * v).sum(axis=-1)
