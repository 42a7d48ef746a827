"""Comparisons and selections: maximum, minimum, clip, where (differentiable),
and equal/not_equal/less/less_equal/greater/greater_equal and the logical
ops (not differentiable, bool results).

Gradients at ties: where ``maximum``'s (or ``minimum``'s) inputs are equal,
each gets half of the gradient, as in PyTorch. (TensorFlow gives all of it
to the first input there; half/half is symmetric in the two inputs, and
``maximum(x, x)`` still has gradient 1.) ``clip`` passes the
gradient where ``x_min <= x <= x_max`` (bounds included) and 0 outside; the
bounds themselves are constants. ``where`` sends the gradient to ``x1``
where the condition holds and to ``x2`` elsewhere.

Comparisons and logical ops never record a graph: their bool outputs never
require grad, whatever their inputs do. ``<``, ``<=``, ``>``, ``>=`` on
Tensors call them (``==`` stays identity, so that Tensors remain hashable).
"""

__all__ = [
    "maximum", "minimum", "clip", "where",
    "equal", "not_equal", "less", "less_equal", "greater", "greater_equal",
    "logical_and", "logical_or", "logical_xor", "logical_not",
]

import numpy

from minikeras import backend
from minikeras.autograd import Function, Tensor
from minikeras.ops._checks import check_broadcast, shape_of
from minikeras.ops._promotion import promote_operands
from minikeras.ops.math.unary import _as_tensor, _check_operand


def _binary_operands(op_name, a, b):
    """Check ``a`` and ``b`` and make sure at least one is a Tensor (two
    numbers would otherwise give a NumPy scalar, not a Tensor)."""
    _check_operand(op_name, a)
    _check_operand(op_name, b)
    a, b = _weak_scalar(a), _weak_scalar(b)
    check_broadcast(op_name, a, b)
    if not isinstance(a, Tensor) and not isinstance(b, Tensor):
        a = _as_tensor(op_name, a)
    return a, b


def _weak_scalar(value):
    """NumPy scalars (and 0-d arrays) as Python numbers, so that a float64 or int32
    scalar does not promote a float32 tensor (Python numbers adapt to the tensor's
    dtype; Keras's clip keeps x's dtype)."""
    if isinstance(value, numpy.ndarray) and value.ndim == 0 and value.dtype.kind in "biuf":
        return value.item()
    return value.item() if isinstance(value, numpy.generic) else value


def _constant(value):
    """``value`` cut from the graph (for ops that have no gradient)."""
    if isinstance(value, Tensor) and value.requires_grad:
        return value.detach()
    return value


# ------------------------------------------------------------ maximum/minimum
class _Extremum(Function):
    """Elementwise max (``pick_larger``) or min of two inputs."""

    def __init__(self, pick_larger):
        self.pick_larger = pick_larger

    def forward(self, a, b):
        xp = self.device.xp
        if any(self.needs_input_grad):
            self.save_for_backward(a, b)
        return xp.maximum(a, b) if self.pick_larger else xp.minimum(a, b)

    def backward(self, grad):
        a, b = self.saved
        needs_a, needs_b = self.needs_input_grad
        wins = (a > b) if self.pick_larger else (a < b)
        # Ties split the gradient evenly (PyTorch's rule).
        # (Multiplying the float gradient by bool masks keeps its dtype.)
        grad_a = grad * wins + (grad * 0.5) * (a == b)
        grad_b = None
        if needs_b:
            grad_b = grad - grad_a
        return (grad_a if needs_a else None), grad_b


def maximum(x1, x2):
    """Elementwise maximum of ``x1`` and ``x2`` (NumPy broadcasting).

    The gradient goes to the larger input; where both are equal, each gets
    half of it (as in PyTorch; TensorFlow gives it all to ``x1``).

    Raises:
        ValueError: the shapes do not broadcast.
    """
    x1, x2 = promote_operands(*_binary_operands("maximum", x1, x2))  # Keras's dtype rules
    return _Extremum(True).apply(x1, x2)


def minimum(x1, x2):
    """Elementwise minimum of ``x1`` and ``x2``; ties split the gradient in half.

    Raises:
        ValueError: the shapes do not broadcast.
    """
    x1, x2 = promote_operands(*_binary_operands("minimum", x1, x2))  # Keras's dtype rules
    return _Extremum(False).apply(x1, x2)


# ------------------------------------------------------------------------ clip
class Clip(Function):
    def forward(self, x, low, high):
        if self.needs_input_grad[0]:
            self.save_for_backward(x, low, high)
        return self.device.xp.clip(x, low, high)

    def backward(self, grad):
        x, low, high = self.saved
        if low is None:
            inside = x <= high
        elif high is None:
            inside = x >= low
        else:
            inside = (x >= low) & (x <= high)
        return grad * inside, None, None


def clip(x, x_min, x_max):
    """Limit ``x`` to ``[x_min, x_max]`` elementwise.

    Args:
        x: the input tensor.
        x_min, x_max: numbers or tensors broadcastable to ``x``; one of them
            may be None (no bound on that side). They are constants: no
            gradient flows to them.

    Returns:
        The clipped tensor. Its gradient is 1 where ``x_min <= x <= x_max``
        (bounds included) and 0 outside.

    Raises:
        ValueError: both bounds are None, ``x_min > x_max`` (numbers), or a
            bound does not broadcast to ``x``.
    """
    x = _as_tensor("clip", x)
    if x_min is None and x_max is None:
        raise ValueError("clip: at least one of x_min and x_max must be given, received None for both.")
    x_min, x_max = _weak_scalar(x_min), _weak_scalar(x_max)
    for bound in (x_min, x_max):
        if bound is not None:
            _check_operand("clip", bound)
            check_broadcast("clip", x, bound)
    if isinstance(x_min, (int, float)) and isinstance(x_max, (int, float)) and x_min > x_max:
        raise ValueError(f"clip: x_min must not exceed x_max, received x_min={x_min} and x_max={x_max}.")
    return Clip().apply(x, _constant(x_min), _constant(x_max))


# ----------------------------------------------------------------------- where
class Where(Function):
    def forward(self, condition, x1, x2):
        xp = self.device.xp
        if condition.dtype != bool:
            condition = condition.astype(bool)
        if self.needs_input_grad[1] or self.needs_input_grad[2]:
            self.save_for_backward(condition)
        return xp.where(condition, x1, x2)

    def backward(self, grad):
        (condition,) = self.saved
        xp = self.device.xp
        # xp.where rather than grad * mask: an inf gradient must give 0, not
        # nan, to the branch that was not taken.
        grad_x1 = xp.where(condition, grad, 0) if self.needs_input_grad[1] else None
        grad_x2 = xp.where(condition, 0, grad) if self.needs_input_grad[2] else None
        return None, grad_x1, grad_x2


class Nonzero(Function):
    def forward(self, condition):
        return tuple(index.astype("int64") for index in self.device.xp.nonzero(condition))


def where(condition, x1=None, x2=None):
    """Pick ``x1`` where ``condition`` holds and ``x2`` elsewhere.

    Args:
        condition: a bool tensor or array (other dtypes are read as
            ``!= 0``), broadcast with ``x1`` and ``x2``.
        x1, x2: tensors, arrays or numbers. Both None: return the indices
            where ``condition`` is true, one int64 tensor per axis (like
            ``numpy.nonzero``).

    Returns:
        The selected values (differentiable in ``x1`` and ``x2``), or the
        tuple of index tensors.

    Raises:
        ValueError: only one of ``x1``/``x2`` is given, or the shapes do not
            broadcast together.
    """
    condition = _constant(_as_tensor("where", condition))
    if x1 is None and x2 is None:
        if not shape_of(condition):
            raise ValueError("where: the indices of true values need a condition with at least 1 dimension, "
                             "received a 0-d condition.")
        return Nonzero().apply(condition)
    if x1 is None or x2 is None:
        raise ValueError("where: give both x1 and x2, or neither (to get the indices of true values).")
    _check_operand("where", x1)
    _check_operand("where", x2)
    x1, x2 = _weak_scalar(x1), _weak_scalar(x2)
    shapes = [shape_of(condition), shape_of(x1), shape_of(x2)]
    result = ()
    for shape in shapes:
        result = _broadcast_shape("where", result, shape, shapes)
    if not isinstance(x1, Tensor) and not isinstance(x2, Tensor) and not backend.is_array(x1) and not backend.is_array(x2):
        x1 = _as_tensor("where", x1)  # two numbers: take the default float32, not float64
    x1, x2 = promote_operands(x1, x2)  # Keras's dtype rules
    return Where().apply(condition, x1, x2)


def _broadcast_shape(op_name, shape_a, shape_b, all_shapes):
    result = []
    for i in range(1, max(len(shape_a), len(shape_b)) + 1):
        size_a = shape_a[-i] if i <= len(shape_a) else 1
        size_b = shape_b[-i] if i <= len(shape_b) else 1
        if size_a != size_b and size_a != 1 and size_b != 1:
            listed = ", ".join(str(shape) for shape in all_shapes)
            raise ValueError(f"{op_name}: shapes {listed} cannot be broadcast together.")
        result.append(size_a if size_b == 1 else size_b)
    return tuple(reversed(result))


# ----------------------------------------------------- comparisons and logic
class _Elementwise(Function):
    """A non-differentiable elementwise xp function of one or two inputs."""

    def __init__(self, function_name):
        self.function_name = function_name

    @property
    def name(self):
        return self.function_name

    def forward(self, *arrays):
        return getattr(self.device.xp, self.function_name)(*arrays)


def _comparison(function_name, symbol):
    def op(x1, x2):
        x1, x2 = _binary_operands(function_name, x1, x2)
        return _Elementwise(function_name).apply(_constant(x1), _constant(x2))

    op.__name__ = function_name
    op.__doc__ = (
        f"Elementwise ``x1 {symbol} x2`` as a bool tensor (broadcasting; never requires grad).\n\n"
        "    Raises:\n        ValueError: the shapes do not broadcast.\n"
    )
    return op


equal = _comparison("equal", "==")
not_equal = _comparison("not_equal", "!=")
less = _comparison("less", "<")
less_equal = _comparison("less_equal", "<=")
greater = _comparison("greater", ">")
greater_equal = _comparison("greater_equal", ">=")
logical_and = _comparison("logical_and", "and")
logical_or = _comparison("logical_or", "or")
logical_xor = _comparison("logical_xor", "xor")


def logical_not(x):
    """Elementwise logical negation as a bool tensor (never requires grad)."""
    x = _as_tensor("logical_not", x)
    return _Elementwise("logical_not").apply(_constant(x))
