"""Running sums and products along an axis: cumsum, cumprod, nancumsum,
nancumprod, and differences (diff).

``cumsum``'s gradient is the reversed cumulative sum of the gradient.
``cumprod``'s is computed without dividing by the input (exclusive
products from both sides), so it is exact at zeros. ``axis=None`` works on
the flattened input, as NumPy's. The nan variants treat NaN as 0 (sums) or
1 (products) and pass no gradient to the NaNs.
"""

__all__ = ["cumsum", "cumprod", "nancumsum", "nancumprod", "diff"]

import numpy

from minikeras.backend.dtypes import is_float_dtype
from minikeras.device import to_host

from minikeras.autograd import Function
from minikeras.ops.array._common import _single_axis
from minikeras.ops.array.reshaping import flatten
from minikeras.ops.math._elementwise import operand
from minikeras.ops.math._operands import _as_tensor
from minikeras.ops.math.compare import where
from minikeras.ops.math.predicates import isnan
from minikeras._support.argument_validation import check_dtype, validate_dtype, validate_int


class CumSum(Function):
    half_in_float32 = True  # CuPy 14's scan kernels do not compile for bfloat16 (no += on its bfloat16)
    def __init__(self, axis):
        self.axis = axis

    def forward(self, x):
        return self.device.xp.cumsum(x, axis=self.axis, dtype=x.dtype)  # Keras keeps int32 (NumPy widens)

    def backward(self, grad):
        xp = self.device.xp
        return xp.flip(xp.cumsum(xp.flip(grad, self.axis), axis=self.axis), self.axis)


class CumProd(Function):
    half_in_float32 = True  # as CumSum (no *= on CuPy's bfloat16)
    def __init__(self, axis):
        self.axis = axis

    def forward(self, x):
        out = self.device.xp.cumprod(x, axis=self.axis, dtype=x.dtype)
        if self.needs_input_grad[0]:
            self.save_for_backward(x, out)
        return out

    def backward(self, grad):
        # d out_j / d x_i = out_j / x_i for j >= i. Without zeros that is a reversed
        # cumulative sum divided by x; with zeros (rare) each position is summed
        # from the exclusive prefix product and the running products after it, O(n^2).
        x, out = self.saved
        xp = self.device.xp
        if not to_host((x == 0).any()):
            weighted = xp.flip(xp.cumsum(xp.flip(grad * out, self.axis), axis=self.axis), self.axis)
            return weighted / x
        moved = xp.moveaxis(x, self.axis, -1)
        grad_moved = xp.moveaxis(grad, self.axis, -1)
        n = moved.shape[-1]
        result = xp.zeros_like(moved)
        prefix = xp.ones_like(moved)
        if n > 1:
            prefix[..., 1:] = xp.cumprod(moved[..., :-1], axis=-1)
        for i in range(n):
            # running product of x_(i+1..j) for j = i..n-1
            tail = xp.cumprod(xp.concatenate([xp.ones_like(moved[..., i:i + 1]), moved[..., i + 1:]], axis=-1),
                              axis=-1)
            result[..., i] = prefix[..., i] * (grad_moved[..., i:] * tail).sum(axis=-1)
        return xp.moveaxis(result, -1, self.axis)


def _prepare(op_name, x, axis, dtype):
    x = _as_tensor(op_name, operand(op_name, x))
    if dtype is not None:
        x = x.astype(validate_dtype(op_name, dtype))
    elif x.dtype.kind == "b":
        x = x.astype("int32")
    if axis is None:
        return flatten(x), 0
    if x.ndim == 0:
        return flatten(x), 0
    return x, _single_axis(op_name, axis, x.ndim)


def cumsum(x, axis=None, dtype=None):
    """Cumulative sum along ``axis`` (None: of the flattened tensor)."""
    x, axis = _prepare("cumsum", x, axis, dtype)
    return CumSum(axis).apply(x)


def cumprod(x, axis=None, dtype=None):
    """Cumulative product along ``axis`` (None: of the flattened tensor); exact gradients at zeros."""
    x, axis = _prepare("cumprod", x, axis, dtype)
    return CumProd(axis).apply(x)


def nancumsum(x, axis=None, dtype=None):
    """Cumulative sum treating NaN as 0."""
    x = _as_tensor("nancumsum", operand("nancumsum", x))
    return cumsum(where(isnan(x), 0, x) if is_float_dtype(x.dtype) else x, axis, dtype)


def nancumprod(x, axis=None, dtype=None):
    """Cumulative product treating NaN as 1."""
    x = _as_tensor("nancumprod", operand("nancumprod", x))
    return cumprod(where(isnan(x), 1, x) if is_float_dtype(x.dtype) else x, axis, dtype)


def diff(a, n=1, axis=-1):
    """The ``n``-th discrete difference along ``axis`` (``a[1:] - a[:-1]``, ``n`` times)."""
    from minikeras.ops.array.indexing import getitem

    a = _as_tensor("diff", operand("diff", a))
    n = validate_int("diff", "n", n, minimum=0)
    axis = _single_axis("diff", axis, a.ndim)
    # Each difference shortens the axis by one: past its length the result stays empty (NumPy's).
    for _ in range(min(n, a.shape[axis])):
        head = tuple(slice(None) for _ in range(axis))
        later, earlier = getitem(a, head + (slice(1, None),)), getitem(a, head + (slice(None, -1),))
        # the difference of bools is whether they differ (NumPy's diff uses not_equal for them; Keras's too)
        a = (later != earlier) if a.dtype == numpy.bool_ else later - earlier
    return a
