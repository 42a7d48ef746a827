"""The L1/L2 weight penalty the regularizers add to the loss, as one node."""
from minikeras.backend.dtypes import is_float_dtype
from minikeras.autograd import Function
from minikeras._support.argument_validation import as_tensor, validate_number

__all__ = ["weight_penalty"]


class WeightPenalty(Function):
    """``l1 * sum(|x|) + l2 * sum(x ** 2)`` as one node of the graph.

    One fused node (instead of abs/square, sum, multiply, add) keeps the
    per-step cost of regularization low; the squared sum is a dot product,
    so no temporary the size of the weight is made for L2.
    """

    def __init__(self, l1, l2):
        self.l1, self.l2 = l1, l2

    def forward(self, x):
        xp = self.device.xp
        flat = x.reshape(-1)
        total = xp.zeros((), dtype=x.dtype)
        if self.l1:
            total = total + self.l1 * xp.abs(flat).sum()
        if self.l2:
            total = total + self.l2 * xp.dot(flat, flat)
        if self.needs_input_grad[0]:
            self.save_for_backward(x)
        return xp.asarray(total, dtype=x.dtype)

    def backward(self, grad):
        (x,) = self.saved
        xp = self.device.xp
        result = xp.zeros_like(x)
        if self.l2:
            xp.multiply(x, grad * (2.0 * self.l2), out=result)
        if self.l1:
            result += xp.sign(x) * (grad * self.l1)
        return result



def weight_penalty(x, l1=0.0, l2=0.0):
    """``l1 * sum(|x|) + l2 * sum(x ** 2)``, a scalar of ``x``'s dtype.

    Raises:
        TypeError: ``x`` is not floating point.
    """
    x = as_tensor("weight_penalty", x, allow_bool=False, allow_complex=False)
    if not is_float_dtype(x.dtype):
        raise TypeError(f"weight_penalty needs a floating-point x, received dtype {x.dtype}.")
    return WeightPenalty(validate_number("weight_penalty", "l1", l1),
                         validate_number("weight_penalty", "l2", l2)).apply(x)
