"""Builders for the many small elementwise ops of ``keras.ops``.

Each op is still one ``Function`` subclass with its own name (so placement
logs and errors name it), built from two small functions on arrays:
``compute(xp, *arrays)`` and the partial derivatives. Ops with no gradient
(integer, bitwise and predicate ops) detach their inputs and never record a
graph, as Keras's return no gradient.

Operand dtypes follow Keras's promotion (:mod:`minikeras.ops._promotion`):
an int tensor with a float tensor computes in the float's dtype, Python
numbers are weak, and "float ops" (``arctan2``, ``hypot``...) compute
integer inputs in float32.
"""
import numpy

from minikeras.autograd import Function, Tensor
from minikeras.ops._checks import check_broadcast
from minikeras.ops._promotion import FLOATX, result_type
from minikeras.ops.math._operands import _as_tensor, _float_array
from minikeras._support.argument_validation import validate_tensor_input


def operand(op_name, value):
    """``value`` checked as an operand: lists become Tensors, numbers stay weak."""
    if isinstance(value, (list, tuple)):
        from minikeras.ops.core import convert_to_tensor

        validate_tensor_input(op_name, value, allow_sequence=True)
        return convert_to_tensor(value)
    validate_tensor_input(op_name, value)
    return value.item() if isinstance(value, numpy.generic) else value


def detached(value):
    """``value`` cut from the graph (an input of an op without gradient)."""
    return value.detach() if isinstance(value, Tensor) and value.requires_grad else value


def _camel(name):
    return "".join(part.capitalize() for part in name.split("_"))


class XpCall(Function):
    """A non-differentiable function of arrays, ``compute(xp, *arrays)``."""

    def __init__(self, op_name, compute):
        self.op_name = op_name
        self.compute = compute

    @property
    def name(self):
        return self.op_name

    def forward(self, *arrays):
        with numpy.errstate(all="ignore"):
            return self.compute(self.device.xp, *arrays)

    def backward(self, *grads):  # pragma: no cover - never recorded
        return tuple(None for _ in self.needs_input_grad)


def call_without_gradient(op_name, compute, *values, half_in_float32=False):
    """Run ``compute(xp, *arrays)`` on ``values`` (at least one made a Tensor); no gradient.

    ``half_in_float32=True`` hands ``compute`` float32 copies of 16-bit float
    inputs (``Function.half_in_float32``), for kernels CuPy lacks in bfloat16
    (its sorts)."""
    values = [detached(operand(op_name, value)) for value in values]
    if not any(isinstance(value, Tensor) for value in values):
        values[0] = _as_tensor(op_name, values[0])
    function = XpCall(op_name, compute)
    if half_in_float32:
        function.half_in_float32 = True
    return function.apply(*values)


class _Unary(Function):
    compute = derivative = None
    floats = True

    def forward(self, x):
        if self.floats:
            x = _float_array(x)
        with numpy.errstate(all="ignore"):
            out = type(self).compute(self.device.xp, x)
        if self.needs_input_grad[0]:
            self.save_for_backward(x, out)
        return out

    def backward(self, grad):
        x, out = self.saved
        with numpy.errstate(all="ignore"):
            return grad * type(self).derivative(self.device.xp, x, out)


def unary(name, compute, derivative, doc, floats=True):
    """An elementwise op of one input.

    Args:
        name: the Keras name.
        compute: ``(xp, x) -> out``.
        derivative: ``(xp, x, out) -> d out / d x`` (None: no gradient).
        doc: the docstring.
        floats: compute integer/bool inputs in float32 (Keras's rule for
            transcendental functions).
    """
    function_class = type(_camel(name), (_Unary,), {
        "compute": staticmethod(compute), "derivative": staticmethod(derivative), "floats": floats,
    })

    def op(x):
        x = _as_tensor(name, operand(name, x))
        return function_class().apply(x if derivative is not None else detached(x))

    op.__name__ = op.__qualname__ = name
    op.__doc__ = doc
    return op


class _Binary(Function):
    compute = derivative = None

    def __init__(self, dtype):
        self.dtype = dtype

    def forward(self, a, b):
        xp = self.device.xp
        a = xp.asarray(a, dtype=self.dtype)
        b = xp.asarray(b, dtype=self.dtype)
        with numpy.errstate(all="ignore"):
            out = type(self).compute(xp, a, b)
        if any(self.needs_input_grad):
            self.save_for_backward(a, b, out)
        return out

    def backward(self, grad):
        a, b, out = self.saved
        with numpy.errstate(all="ignore"):
            partial_a, partial_b = type(self).derivative(self.device.xp, a, b, out, self.needs_input_grad)
        return (grad * partial_a if partial_a is not None else None,
                grad * partial_b if partial_b is not None else None)


def binary_dtype(a, b, floats):
    """Keras's result dtype of ``a`` and ``b`` (float32 for ints when ``floats``)."""
    dtype = result_type(a, b)
    if floats and dtype.kind in "biu":
        dtype = FLOATX
    return dtype


def binary(name, compute, derivative, doc, floats=True):
    """An elementwise op of two broadcast inputs.

    Args:
        compute: ``(xp, a, b) -> out`` on arrays already in the result dtype.
        derivative: ``(xp, a, b, out, needs) -> (d out/d a, d out/d b)``
            (None entries where not needed); None: no gradient at all.
        floats: integer results are computed in float32.
    """
    function_class = type(_camel(name), (_Binary,), {
        "compute": staticmethod(compute), "derivative": staticmethod(derivative),
    })

    def op(x1, x2):
        x1, x2 = operand(name, x1), operand(name, x2)
        check_broadcast(name, x1, x2)
        if not isinstance(x1, Tensor) and not isinstance(x2, Tensor):
            x1 = _as_tensor(name, x1)
        dtype = binary_dtype(x1, x2, floats)
        if derivative is None:
            x1, x2 = detached(x1), detached(x2)
        return function_class(dtype).apply(x1, x2)

    op.__name__ = op.__qualname__ = name
    op.__doc__ = doc
    return op
