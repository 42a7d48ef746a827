"""Reductions: sum, mean, max, min, prod, var, std, logsumexp, argmax, argmin,
with Keras's signatures (``max``/``min`` take ``initial``, ``prod`` takes ``dtype``).

``axis`` is None (all axes), an int or a tuple of ints (negative ones count
from the end); ``keepdims`` keeps the reduced axes with size 1. An axis out
of range raises ValueError naming the op.

Gradients:
- ``max``/``min``: split evenly among the tied extremes (as TensorFlow's
  ``reduce_max`` does): for ``max([1, 3, 3])`` each 3 gets half.
- ``prod``: the product of the other elements, computed from exclusive
  cumulative products (no division), so it is exact when inputs hold one
  zero or several.
- ``var``/``std``: population statistics (ddof=0), like Keras ``ops.var``;
  the gradient of ``std`` where the variance is 0 is 0 (not nan).
- ``logsumexp``: stable for any magnitude (the maximum is subtracted first);
  its gradient is the softmax.
``argmax``/``argmin`` return int32 (as Keras) and have no gradient; ``sum``
of bool and 8/16-bit integers is 32-bit and other integers keep their dtype
(Keras's rule; NumPy widens to int64).
"""

__all__ = ["sum", "mean", "max", "min", "prod", "var", "std", "logsumexp", "argmax", "argmin"]

import numpy

from minikeras.autograd import Function
from minikeras.ops._checks import normalize_axis, shape_of
from minikeras.ops._promotion import sum_dtype

from minikeras._support.argument_validation import is_int, validate_dtype, validate_flag
from minikeras.ops.math._elementwise import operand
from minikeras.ops.math.unary import _as_tensor, _float_array


def _expand_reduced(grad, axes, keepdims, xp):
    """Reinsert reduced axes (size 1) so ``grad`` broadcasts to the input."""
    if keepdims:
        return grad
    return xp.expand_dims(grad, axes) if axes else grad


class Sum(Function):
    def __init__(self, axes, keepdims):
        self.axes, self.keepdims = axes, keepdims

    def forward(self, x):
        self.input_shape = x.shape
        dtype = sum_dtype(x.dtype) if x.dtype.kind in "biu" else None  # Keras keeps int32 (NumPy widens)
        return x.sum(axis=self.axes, keepdims=self.keepdims, dtype=dtype)

    def backward(self, grad):
        xp = self.device.xp
        grad = _expand_reduced(grad, self.axes, self.keepdims, xp)
        return xp.broadcast_to(grad, self.input_shape)


class Mean(Function):
    def __init__(self, axes, keepdims):
        self.axes, self.keepdims = axes, keepdims

    def forward(self, x):
        self.input_shape = x.shape
        return _float_array(x).mean(axis=self.axes, keepdims=self.keepdims)

    def backward(self, grad):
        xp = self.device.xp
        count = 1
        for axis in self.axes:
            count *= self.input_shape[axis]
        grad = _expand_reduced(grad, self.axes, self.keepdims, xp) / count
        return xp.broadcast_to(grad, self.input_shape)


def sum(x, axis=None, keepdims=False):  # noqa: A001  (keras.ops name)
    """Sum over ``axis`` (int, tuple, or None for all)."""
    x = _as_tensor("sum", x)
    axes = _reduced_axes("sum", x, axis, keepdims=keepdims)
    return Sum(axes, keepdims).apply(x)


def mean(x, axis=None, keepdims=False):
    """Mean over ``axis`` (int, tuple, or None for all); integers give float32."""
    x = _as_tensor("mean", x)
    shape = shape_of(x)
    axes = _reduced_axes("mean", x, axis, keepdims=keepdims)
    for a in axes:
        if shape[a] == 0:
            raise ValueError(f"mean: cannot average over axis {a} of size 0 (shape {shape}).")
    return Mean(axes, keepdims).apply(x)


def _reduced_axes(op_name, x, axis, allow_empty=True, keepdims=False):
    """Normalize ``axis`` for ``x``; with ``allow_empty=False`` refuse to
    reduce over an axis of size 0 (a max of nothing is undefined). Every
    reduction passes its ``keepdims`` through here to have it checked."""
    validate_flag(op_name, "keepdims", keepdims)
    shape = shape_of(x)
    if not shape and axis is not None and axis != ():
        # normalize_axis lets axis 0 through for a 0-d tensor; NumPy does not.
        raise ValueError(f"{op_name}: axis {axis!r} is out of range for a tensor with 0 dimensions.")
    axes = normalize_axis(op_name, axis, len(shape))
    if not allow_empty:
        for a in axes:
            if a < len(shape) and shape[a] == 0:
                raise ValueError(f"{op_name}: cannot reduce over axis {a} of size 0 (shape {shape}).")
    return axes


def _count(shape, axes):
    count = 1
    for a in axes:
        count *= shape[a]
    return count


def _squeeze(array_keep, axes, keepdims):
    """Drop the kept (size-1) ``axes`` of a keepdims result unless asked not to."""
    if keepdims or not axes:
        return array_keep
    return array_keep.reshape(tuple(size for i, size in enumerate(array_keep.shape) if i not in axes))


# ------------------------------------------------------------------- max, min
class Extreme(Function):
    """max (``largest``) or min over axes; ties share the gradient evenly."""

    def __init__(self, axes, keepdims, largest):
        self.axes, self.keepdims, self.largest = axes, keepdims, largest

    @property
    def name(self):
        return "Max" if self.largest else "Min"

    def forward(self, x):
        reduce = x.max if self.largest else x.min
        out_keep = reduce(axis=self.axes, keepdims=True)
        if self.needs_input_grad[0]:
            self.save_for_backward(x, out_keep)
        return _squeeze(out_keep, self.axes, self.keepdims)

    def backward(self, grad):
        x, out_keep = self.saved
        xp = self.device.xp
        grad = _expand_reduced(grad, self.axes, self.keepdims, xp)
        hits = x == out_keep
        # At least 1, so that a nan extreme (nothing equals it) gives 0, not 0/0.
        count = xp.maximum(hits.sum(axis=self.axes, keepdims=True), 1).astype(grad.dtype)
        return hits * (grad / count)


def max(x, axis=None, keepdims=False, initial=None):  # noqa: A001  (keras.ops name)
    """Maximum over ``axis`` (int, tuple, or None for all), and at least
    ``initial`` when given (which an empty axis then returns).

    The gradient is split evenly among tied maxima (TensorFlow's rule).

    Raises:
        ValueError: an axis is out of range, or a reduced axis has size 0 and no ``initial``.
    """
    if initial is not None:
        from minikeras.ops.math.compare import maximum

        return _with_initial("max", max, maximum, x, axis, keepdims, initial)
    x = _as_tensor("max", x)
    return Extreme(_reduced_axes("max", x, axis, allow_empty=False, keepdims=keepdims), keepdims, True).apply(x)


def min(x, axis=None, keepdims=False, initial=None):  # noqa: A001  (keras.ops name)
    """Minimum over ``axis``, and at most ``initial`` when given (which an
    empty axis then returns); the gradient is split evenly among tied minima.

    Raises:
        ValueError: an axis is out of range, or a reduced axis has size 0 and no ``initial``.
    """
    if initial is not None:
        from minikeras.ops.math.compare import minimum

        return _with_initial("min", min, minimum, x, axis, keepdims, initial)
    x = _as_tensor("min", x)
    return Extreme(_reduced_axes("min", x, axis, allow_empty=False, keepdims=keepdims), keepdims, False).apply(x)


def _with_initial(op_name, reducer, combine, x, axis, keepdims, initial):
    """``reducer(x)`` combined with ``initial``; over an empty axis, ``initial`` itself."""
    from minikeras.ops.creation import full

    x = _as_tensor(op_name, operand(op_name, x))
    axes = tuple(range(x.ndim)) if axis is None else ((axis,) if isinstance(axis, int) else tuple(axis))
    if any(x.shape[a] == 0 for a in axes):
        shape = tuple(1 if i in [a % x.ndim for a in axes] else s for i, s in enumerate(x.shape))
        if not keepdims:
            shape = tuple(s for i, s in enumerate(x.shape) if i not in [a % x.ndim for a in axes])
        return full(shape, initial, dtype=x.dtype)
    return combine(reducer(x, axis, keepdims), initial)


# ----------------------------------------------------------------------- prod
class Prod(Function):
    half_in_float32 = True  # backward's cumprod: CuPy 14's scans do not compile for bfloat16

    def __init__(self, axes, keepdims):
        self.axes, self.keepdims = axes, keepdims

    def forward(self, x):
        if self.needs_input_grad[0]:
            self.save_for_backward(x)
        return x.prod(axis=self.axes, keepdims=self.keepdims)

    def backward(self, grad):
        (x,) = self.saved
        xp = self.device.xp
        grad = _expand_reduced(grad, self.axes, self.keepdims, xp)
        return grad * self._product_of_others(x, xp)

    def _product_of_others(self, x, xp):
        """For each element, the product of the others in its reduced group:
        exclusive cumulative products from the left times those from the
        right, so zeros need no special case (no division by x)."""
        axes = self.axes
        if not axes:
            return xp.ones_like(x)
        kept = x.ndim - len(axes)
        tail = tuple(range(kept, x.ndim))
        moved = xp.moveaxis(x, axes, tail)
        moved_shape = moved.shape
        groups = moved.reshape(moved_shape[:kept] + (-1,))
        others = xp.ones_like(groups)
        if groups.shape[-1] > 1:
            others[..., 1:] = xp.cumprod(groups[..., :-1], axis=-1)
            from_right = xp.cumprod(groups[..., :0:-1], axis=-1)[..., ::-1]
            others[..., :-1] *= from_right
        return xp.moveaxis(others.reshape(moved_shape), tail, axes)


# Keras's product dtype: bool and 8/16-bit integers widen to 32 bits, other dtypes stay.
_PROD_WIDENED = {"bool": "int32", "int8": "int32", "int16": "int32", "uint8": "uint32", "uint16": "uint32"}


def prod(x, axis=None, keepdims=False, dtype=None):
    """Product over ``axis`` (int, tuple, or None for all) in ``dtype``; 1 for an empty axis.

    ``dtype`` defaults to Keras's: bool and 8/16-bit integers widen to 32
    bits and other dtypes stay (NumPy would widen int32 to int64). The
    gradient is exact with zeros in the input: with one zero in a group only
    that element gets a gradient (the product of the others), with two or
    more all get 0.
    """
    x = _as_tensor("prod", operand("prod", x))
    dtype = validate_dtype("prod", dtype) if dtype is not None else \
        numpy.dtype(_PROD_WIDENED.get(x.dtype.name, x.dtype))
    if x.dtype != dtype:
        x = x.astype(dtype)
    result = _prod(x, axis, keepdims)
    return result if result.dtype == dtype else result.astype(dtype)


def _prod(x, axis=None, keepdims=False):
    """The product in ``x``'s own dtype (what :func:`prod` computes after its cast)."""
    x = _as_tensor("prod", x)
    return Prod(_reduced_axes("prod", x, axis, keepdims=keepdims), keepdims).apply(x)


# ------------------------------------------------------------------ var, std
class Moment(Function):
    """Population variance over axes, or its square root (``root=True``)."""

    def __init__(self, axes, keepdims, root):
        self.axes, self.keepdims, self.root = axes, keepdims, root

    @property
    def name(self):
        return "Std" if self.root else "Var"

    def forward(self, x):
        xp = self.device.xp
        x = _float_array(x)
        centered = x - x.mean(axis=self.axes, keepdims=True)
        out_keep = xp.square(centered).mean(axis=self.axes, keepdims=True)
        if self.root:
            out_keep = xp.sqrt(out_keep)
        if self.needs_input_grad[0]:
            self.count = _count(x.shape, self.axes)
            self.save_for_backward(centered, out_keep if self.root else None)
        return _squeeze(out_keep, self.axes, self.keepdims)

    def backward(self, grad):
        centered, std_keep = self.saved
        xp = self.device.xp
        grad = _expand_reduced(grad, self.axes, self.keepdims, xp)
        if not self.root:
            return centered * (grad * (2.0 / self.count))
        # d std = (x - mean) / (N std): defined as 0 where std is 0 (a
        # constant group), where the true derivative does not exist.
        positive = std_keep > 0
        scale = grad * positive / (xp.where(positive, std_keep, 1) * self.count)
        return centered * scale


def _moment(op_name, x, axis, keepdims, root):
    # The real formula mean((x - mean)^2) gives complex garbage for complex x.
    x = _as_tensor(op_name, x, allow_complex=False)
    axes = _reduced_axes(op_name, x, axis, keepdims=keepdims)
    shape = shape_of(x)
    if _count(shape, axes) == 0:
        raise ValueError(f"{op_name}: cannot compute over an empty set of elements (shape {shape}, axis {axis}).")
    return Moment(axes, keepdims, root).apply(x)


def var(x, axis=None, keepdims=False):
    """Population variance (``ddof=0``, like Keras) over ``axis``.

    Integer inputs are computed in float32.

    Raises:
        ValueError: an axis is out of range, or there is nothing to reduce.
    """
    return _moment("var", x, axis, keepdims, root=False)


def std(x, axis=None, keepdims=False):
    """Population standard deviation (``ddof=0``) over ``axis``.

    Its gradient is 0 where the variance is 0 (instead of nan).

    Raises:
        ValueError: an axis is out of range, or there is nothing to reduce.
    """
    return _moment("std", x, axis, keepdims, root=True)


# ------------------------------------------------------------------ logsumexp
class LogSumExp(Function):
    def __init__(self, axes, keepdims):
        self.axes, self.keepdims = axes, keepdims

    def forward(self, x):
        xp = self.device.xp
        x = _float_array(x)
        if x.size == 0:  # nothing to add up (an empty sum, 0: its log is -inf), nothing to shift by
            shift = xp.zeros(tuple(1 if axis in self.axes else size for axis, size in enumerate(x.shape)), x.dtype)
        else:
            shift = x.max(axis=self.axes, keepdims=True)
        # An all -inf (or inf) group: shift by 0 so that -inf - -inf is no nan.
        shift = xp.where(xp.isfinite(shift), shift, 0)
        exps = xp.exp(x - shift)
        total = exps.sum(axis=self.axes, keepdims=True)
        with numpy.errstate(divide="ignore"):
            out_keep = xp.log(total) + shift
        if self.needs_input_grad[0]:
            self.save_for_backward(exps, total)
        return _squeeze(out_keep, self.axes, self.keepdims)

    def backward(self, grad):
        exps, total = self.saved
        xp = self.device.xp
        if exps.size == 0:
            return exps  # (an empty input: an empty gradient, no 0 / 0)
        grad = _expand_reduced(grad, self.axes, self.keepdims, xp)
        return exps * (grad / total)  # softmax times the incoming gradient


def logsumexp(x, axis=None, keepdims=False):
    """``log(sum(exp(x)))`` over ``axis``, stable for large magnitudes.

    ``logsumexp([1000, 1000]) == 1000 + log(2)`` and
    ``logsumexp([-1000, -1000]) == -1000 + log(2)``, with no overflow. The
    gradient is ``softmax(x)`` along the reduced axes. Over an empty axis it
    is ``log(0) = -inf``, as Keras (NumPy's and torch's answer too).

    Raises:
        ValueError: an axis is out of range.
    """
    x = _as_tensor("logsumexp", x)
    return LogSumExp(_reduced_axes("logsumexp", x, axis, keepdims=keepdims), keepdims).apply(x)


# -------------------------------------------------------------- argmax/argmin
class ArgExtreme(Function):
    """Index of the max (``largest``) or min; not differentiable."""

    def __init__(self, axis, keepdims, largest):
        self.axis, self.keepdims, self.largest = axis, keepdims, largest

    @property
    def name(self):
        return "ArgMax" if self.largest else "ArgMin"

    def forward(self, x):
        xp = self.device.xp
        find = xp.argmax if self.largest else xp.argmin
        return find(x, axis=self.axis, keepdims=self.keepdims).astype("int32", copy=False)  # Keras's int32


def _arg_extreme(op_name, x, axis, keepdims, largest):
    x = _as_tensor(op_name, x)
    shape = shape_of(x)
    validate_flag(op_name, "keepdims", keepdims)
    if axis is not None:
        if not is_int(axis):
            raise TypeError(f"{op_name}: axis must be an int or None, received {axis!r}.")
        (axis,) = _reduced_axes(op_name, x, axis, keepdims=keepdims)
        if shape[axis] == 0:
            raise ValueError(f"{op_name}: cannot search an axis of size 0 (axis {axis} of shape {shape}).")
    elif x.size == 0:
        raise ValueError(f"{op_name}: cannot search an empty tensor (shape {shape}).")
    return ArgExtreme(axis, keepdims, largest).apply(x.detach() if x.requires_grad else x)


def argmax(x, axis=None, keepdims=False):
    """Index (int32, as Keras) of the maximum along ``axis``; None searches the flattened tensor.

    The first occurrence wins among ties. Not differentiable.

    Raises:
        ValueError: the axis is out of range or empty.
    """
    return _arg_extreme("argmax", x, axis, keepdims, True)


def argmin(x, axis=None, keepdims=False):
    """Index (int32, as Keras) of the minimum along ``axis``; None searches the flattened tensor.

    The first occurrence wins among ties. Not differentiable.

    Raises:
        ValueError: the axis is out of range or empty.
    """
    return _arg_extreme("argmin", x, axis, keepdims, False)
