"""Triangular solves by substitution: the Function behind ``solve_triangular``.

NumPy has no triangular solver (SciPy's is no dependency) and the general
``solve`` factors the matrix with a unit lower triangle whose zeros meet a
NaN of ``b`` (0 * NaN): a NaN in one row of ``b`` then spread to rows the
triangle never reaches. Substitution row by row touches only the rows each
one depends on, as LAPACK's ``trsm`` (TensorFlow's, SciPy's) does.
"""

__all__ = ["TriangularSolve"]

from minikeras.autograd import Function


def substitute(xp, a, b, lower):
    """``x`` with ``a @ x = b``: ``a`` (..., n, n) triangular, ``b`` (..., n, k)."""
    n = a.shape[-1]
    x = xp.zeros(b.shape, dtype=xp.result_type(a.dtype, b.dtype))
    for i in (range(n) if lower else range(n - 1, -1, -1)):
        known = slice(0, i) if lower else slice(i + 1, n)
        partial = xp.matmul(a[..., i:i + 1, known], x[..., known, :])[..., 0, :]
        x[..., i, :] = (b[..., i, :] - partial) / a[..., i, i:i + 1]
    return x


class TriangularSolve(Function):
    """``x`` with ``a @ x = b`` for the ``lower`` (or upper) triangle of ``a``; ``b`` a matrix, or a
    vector when ``vector``. Gradients: ``A^-T G`` for ``b`` and ``-(A^-T G) X^T`` on the triangle for ``a``."""

    half_in_float32 = True

    def __init__(self, lower, vector):
        self.lower, self.vector = lower, vector

    def _triangle(self, xp, a, lower):
        return xp.tril(a) if lower else xp.triu(a)

    def forward(self, a, b):
        xp = self.device.xp
        a = self._triangle(xp, a, self.lower)
        out = substitute(xp, a, b[..., None] if self.vector else b, self.lower)
        if any(self.needs_input_grad):
            self.save_for_backward(a, out)
        return out[..., 0] if self.vector else out

    def backward(self, grad):
        a, out = self.saved
        xp = self.device.xp
        g = grad[..., None] if self.vector else grad
        grad_b = substitute(xp, xp.swapaxes(a, -1, -2), g, not self.lower)
        grad_a = None
        if self.needs_input_grad[0]:
            grad_a = self._triangle(xp, -(grad_b @ xp.swapaxes(out, -1, -2)), self.lower)
        return grad_a, (grad_b[..., 0] if self.vector else grad_b)
