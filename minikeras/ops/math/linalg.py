"""Linear algebra through ``xp.linalg`` (``numpy.linalg`` / ``cupy.linalg``):
cholesky, cholesky_inverse, det, eig, eigh, inv, lstsq, lu_factor,
matrix_rank, norm, pinv, qr, slogdet, logdet, solve, solve_triangular, svd.

All take batches of matrices on the last two axes. Differentiable, with the
standard matrix-calculus formulas: ``inv`` (``-A^-T G A^-T``), ``det``
(``G det A^-T``), ``slogdet``/``logdet`` (``G A^-T``), ``solve`` and
``solve_triangular`` (``A^-T G`` and ``-A^-T G X^T``), ``cholesky``
(Murray's formula), ``eigh`` (eigenvalues and vectors, distinct eigenvalues
assumed), ``svd`` with ``compute_uv=False``, and ``norm``, ``pinv``,
``lstsq``, ``cholesky_inverse`` as compositions. ``eig`` (general,
complex results), ``qr``, ``lu_factor``, ``matrix_rank`` and ``svd`` with
``compute_uv=True`` return no gradient. ``solve_triangular`` substitutes
row by row (``triangular.py``; the triangle named by ``lower`` is read, the
other ignored). ``lstsq`` and ``slogdet`` give NaN where their inputs hold
NaN or inf (as TensorFlow and JAX; LAPACK would not converge). ``lu_factor``
(SciPy's packed LU and pivots) is computed by partial pivoting in
vectorised row operations, since neither NumPy nor CuPy's core has it.
"""

__all__ = ["cholesky", "cholesky_inverse", "det", "eig", "eigh", "inv", "lstsq", "lu_factor", "matrix_rank",
           "norm", "pinv", "qr", "slogdet", "logdet", "solve", "solve_triangular", "svd"]

import numpy

from minikeras.autograd import Function, Tensor
from minikeras.backend.dtypes import is_float_dtype
from minikeras.ops.array.reshaping import swapaxes
from minikeras.ops.math._elementwise import call_without_gradient, operand
from minikeras.ops.math._operands import _as_tensor
from minikeras._support.argument_validation import (is_option, validate_axis, validate_flag, validate_number,
                                                    validate_option)


def _matrix(op_name, x, square=True):
    x = _as_tensor(op_name, operand(op_name, x), allow_bool=False)
    if not is_float_dtype(x.dtype) and x.dtype.kind != "c":
        x = x.astype("float32")
    if x.ndim < 2 or (square and x.shape[-1] != x.shape[-2]):
        raise ValueError(f"{op_name} expects {'square ' if square else ''}matrices on the last two axes, "
                         f"received shape {x.shape}.")
    return x


def _at_least_float32(a):
    """``a`` in float32 when it is float16 (``xp.linalg`` takes no 16-bit floats)."""
    return a.astype("float32") if a.dtype == numpy.float16 else a


def _t(xp, a):
    return xp.swapaxes(a, -1, -2)


class Inv(Function):
    half_in_float32 = True  # xp.linalg takes no 16-bit floats

    def forward(self, a):
        out = self.device.xp.linalg.inv(a)
        self.save_for_backward(out)
        return out

    def backward(self, grad):
        (inverse,) = self.saved
        xp = self.device.xp
        inverse_t = _t(xp, inverse)
        return -(inverse_t @ grad @ inverse_t)


def inv(x):
    """The inverse of each matrix."""
    return Inv().apply(_matrix("inv", x))


class Det(Function):
    half_in_float32 = True  # xp.linalg takes no 16-bit floats

    def forward(self, a):
        xp = self.device.xp
        out = xp.linalg.det(a)
        if self.needs_input_grad[0]:
            self.save_for_backward(a, out)
        return out

    def backward(self, grad):
        a, out = self.saved
        xp = self.device.xp
        # d det / dA = det * A^-T, written with the adjugate solve so singular A stays finite where det is 0
        return (grad * out)[..., None, None] * _t(xp, xp.linalg.inv(a))


def det(x):
    """The determinant of each matrix."""
    return Det().apply(_matrix("det", x))


class SlogDet(Function):
    half_in_float32 = True  # xp.linalg takes no 16-bit floats

    def forward(self, a):
        xp = self.device.xp
        with numpy.errstate(invalid="ignore"):  # a NaN matrix: NaN, said by the result (slogdet below)
            sign, logabs = xp.linalg.slogdet(a)
        if self.needs_input_grad[0]:
            self.save_for_backward(a)
        return sign, logabs

    def backward(self, grad_sign, grad_log):
        (a,) = self.saved
        xp = self.device.xp
        return grad_log[..., None, None] * _t(xp, xp.linalg.inv(a))


def slogdet(x):
    """``(sign, log|det|)`` of each matrix; the gradient flows through ``log|det|``. The sign of a matrix
    whose determinant is NaN is NaN (TensorFlow's and JAX's; NumPy's LAPACK call reports 1 or -1)."""
    from minikeras.ops.math.compare import where
    from minikeras.ops.math.predicates import isnan

    sign, logabs = SlogDet().apply(_matrix("slogdet", x))
    return where(isnan(logabs.detach()), float("nan"), sign.detach()), logabs


def logdet(x):
    """``log(det(x))`` of each (positive-definite) matrix; NaN where det < 0."""
    sign, logabs = slogdet(x)
    from minikeras.ops.math.compare import where

    return where(sign > 0, logabs, float("nan"))


class Solve(Function):
    half_in_float32 = True  # xp.linalg takes no 16-bit floats

    def __init__(self, vector):
        self.vector = vector

    def forward(self, a, b):
        xp = self.device.xp
        rhs = b[..., None] if self.vector else b
        out = xp.linalg.solve(a, rhs)
        if any(self.needs_input_grad):
            self.save_for_backward(a, out)
        return out[..., 0] if self.vector else out

    def backward(self, grad):
        a, out = self.saved
        xp = self.device.xp
        g = grad[..., None] if self.vector else grad
        grad_b = xp.linalg.solve(_t(xp, a), g)
        grad_a = -(grad_b @ _t(xp, out)) if self.needs_input_grad[0] else None
        return grad_a, (grad_b[..., 0] if self.vector else grad_b)


def solve(a, b):
    """``x`` with ``a @ x = b`` (``b`` a matrix, or a vector when its rank is one less than ``a``'s)."""
    a, b, vector = _system("solve", a, b)
    return Solve(vector).apply(a, b)


def solve_triangular(a, b, lower=False):
    """``x`` with ``a @ x = b`` for triangular ``a`` (only the ``lower`` or upper triangle is read), by
    substitution (``triangular.py``): a NaN in ``b`` reaches only the rows that depend on it."""
    from minikeras.ops.math.triangular import TriangularSolve

    lower = validate_flag("solve_triangular", "lower", lower)
    a, b, vector = _system("solve_triangular", a, b)
    return TriangularSolve(lower, vector).apply(a, b)


def _system(op_name, a, b):
    """``a`` (square matrices) and ``b`` (matrices, or vectors one rank lower) checked to match; ``b`` in
    ``a``'s dtype. Returns ``(a, b, vector)``."""
    a = _matrix(op_name, a)
    b = _as_tensor(op_name, operand(op_name, b))
    if b.dtype != a.dtype:
        b = b.astype(a.dtype)
    vector = b.ndim == a.ndim - 1
    if b.ndim not in (a.ndim - 1, a.ndim) or b.shape[-1 if vector else -2] != a.shape[-1] or \
            b.shape[:-1 if vector else -2] != a.shape[:-2]:
        raise ValueError(f"{op_name}: a of shape {a.shape} and b of shape {b.shape} do not match (b is a matrix "
                         f"{a.shape[:-2] + (a.shape[-1], 'k')}, or a vector {a.shape[:-1]}).")
    return a, b, vector


class Cholesky(Function):
    half_in_float32 = True  # xp.linalg takes no 16-bit floats

    def forward(self, a):
        xp = self.device.xp
        out = xp.linalg.cholesky(a)
        if self.needs_input_grad[0]:
            self.save_for_backward(out)
        return out

    def backward(self, grad):
        # Murray (2016): Phi(L^T G) then A-bar = sym(L^-T Phi L^-1)
        (lower,) = self.saved
        xp = self.device.xp
        n = lower.shape[-1]
        phi = _t(xp, lower) @ grad
        phi = xp.tril(phi) - 0.5 * phi * xp.eye(n, dtype=phi.dtype)
        inverse = xp.linalg.inv(lower)
        middle = _t(xp, inverse) @ phi @ inverse
        return 0.5 * (middle + _t(xp, middle))


def cholesky(x, upper=False):
    """The Cholesky factor of each symmetric positive-definite matrix (lower, or upper with ``upper``).

    Raises:
        ValueError: a matrix is not positive definite (from the array library).
    """
    upper = validate_flag("cholesky", "upper", upper)
    x = _matrix("cholesky", x)
    with x.device.activate():
        finite = bool(x.device.xp.isfinite(x.data).all())
    if not finite:  # Keras refuses them (TensorFlow's check of the input)
        raise ValueError("cholesky: the matrices must hold finite numbers, received NaN or inf.")
    lower = Cholesky().apply(x)
    return swapaxes(lower, -1, -2) if upper else lower


def cholesky_inverse(x, upper=False):
    """The inverse of ``A`` from its Cholesky factor ``x`` (``A = L L^T``, or ``U^T U`` with ``upper``)."""
    from minikeras.ops.math.matmul import matmul

    upper = validate_flag("cholesky_inverse", "upper", upper)
    from minikeras.ops.array.arranging import tril, triu

    factor = _matrix("cholesky_inverse", x)
    factor = triu(factor) if upper else tril(factor)  # only its triangle is read, as Keras's triangular solve
    inverse_factor = inv(factor)
    if upper:
        return matmul(inverse_factor, swapaxes(inverse_factor, -1, -2))
    return matmul(swapaxes(inverse_factor, -1, -2), inverse_factor)


class Eigh(Function):
    half_in_float32 = True  # xp.linalg takes no 16-bit floats

    def forward(self, a):
        xp = self.device.xp
        values, vectors = xp.linalg.eigh(a)
        if self.needs_input_grad[0]:
            self.save_for_backward(values, vectors)
        return values, vectors

    def backward(self, grad_values, grad_vectors):
        values, vectors = self.saved
        xp = self.device.xp
        vectors_t = _t(xp, vectors)
        inner = xp.zeros(vectors.shape, dtype=vectors.dtype)
        if grad_values is not None:
            inner = inner + grad_values[..., None, :] * xp.eye(values.shape[-1], dtype=values.dtype)
        if grad_vectors is not None:
            gaps = values[..., None, :] - values[..., :, None]
            off_diagonal = ~xp.eye(values.shape[-1], dtype=bool)
            factor = xp.where(off_diagonal, 1 / xp.where(off_diagonal, gaps, 1), 0)
            inner = inner + factor * (vectors_t @ grad_vectors)
        out = vectors @ inner @ vectors_t
        return 0.5 * (out + _t(xp, out))


def eigh(x):
    """Eigenvalues (ascending) and eigenvectors of each symmetric matrix: ``(values, vectors)``.

    Raises:
        ValueError: a matrix holds NaN or inf (the decomposition does not converge; Keras refuses too).
    """
    x = _matrix("eigh", x)
    with x.device.activate():
        finite = bool(x.device.xp.isfinite(x.data).all())
    if not finite:
        raise ValueError("eigh: the matrices must hold finite numbers, received NaN or inf (the eigen decomposition "
                         "does not converge).")
    return Eigh().apply(x)


def eig(x):
    """Eigenvalues and eigenvectors of each general matrix; no gradient.

    Always complex, as Keras's (TensorFlow's, JAX's, torch's): complex128 for
    float64 matrices, complex64 otherwise, even where every eigenvalue is
    real (NumPy would give real arrays then). ``cupy.linalg`` has no general
    eigensolver: on a GPU the matrices are copied to the host, solved by
    NumPy and copied back.
    """
    x = _matrix("eig", x)
    from minikeras.ops.core import convert_to_numpy

    host = convert_to_numpy(x)
    if not numpy.isfinite(host).all():
        raise ValueError("eig: the matrices must hold finite numbers, received NaN or inf (the eigen decomposition "
                         "does not converge).")
    values, vectors = numpy.linalg.eig(host.astype("float32") if host.dtype == numpy.float16 else host)
    complex_dtype = "complex128" if host.dtype in (numpy.float64, numpy.complex128) else "complex64"
    values, vectors = values.astype(complex_dtype), vectors.astype(complex_dtype)  # always complex, as Keras
    return Tensor(values, device=x.device), Tensor(vectors, device=x.device)


def _nan_where_not_finite(xp, a, compute, fill=numpy.nan):
    """``compute(a)``'s outputs, ``fill`` (NaN; a rank: 0) for the matrices of ``a`` that hold NaN or
    inf (as TensorFlow's SVD gives; LAPACK would not converge): those are computed as zeros, then
    overwritten."""
    bad = ~xp.isfinite(a).all(axis=(-1, -2))
    if not bool(bad.any()):
        return compute(a)
    outputs = compute(xp.where(bad[..., None, None], 0, a))
    return tuple(xp.where(bad.reshape(bad.shape + (1,) * (out.ndim - bad.ndim)), fill, out).astype(out.dtype)
                 for out in outputs)


def qr(x, mode="reduced"):
    """The QR factorisation of each matrix: ``(q, r)`` (``mode`` "reduced" or "complete"); no gradient."""
    validate_option("qr", "mode", mode, ("reduced", "complete"))
    x = _matrix("qr", x, square=False).detach()
    with x.device.activate():
        q, r = x.device.xp.linalg.qr(_at_least_float32(x.data), mode=mode)
        q, r = q.astype(x.dtype), r.astype(x.dtype)
    return Tensor(q, device=x.device), Tensor(r, device=x.device)


class SingularValues(Function):
    half_in_float32 = True  # xp.linalg takes no 16-bit floats

    def forward(self, a):
        xp = self.device.xp
        u, s, vt = xp.linalg.svd(a, full_matrices=False)
        if self.needs_input_grad[0]:
            self.save_for_backward(u, vt)
        return s

    def backward(self, grad):
        u, vt = self.saved
        return (u * grad[..., None, :]) @ vt


def svd(x, full_matrices=True, compute_uv=True):
    """The singular value decomposition ``(u, s, v^T)``, or only ``s`` (differentiable) with ``compute_uv=False``."""
    x = _matrix("svd", x, square=False)
    if not validate_flag("svd", "compute_uv", compute_uv):
        return SingularValues().apply(x)
    x = x.detach()
    with x.device.activate():
        full = validate_flag("svd", "full_matrices", full_matrices)
        u, s, vt = _nan_where_not_finite(x.device.xp, x.data, lambda a: x.device.xp.linalg.svd(
            _at_least_float32(a), full_matrices=full))
        parts = [part.astype(x.dtype) if x.dtype == numpy.float16 else part for part in (u, s, vt)]
    return tuple(Tensor(part, device=x.device) for part in parts)


def pinv(x, rcond=None):
    """The Moore-Penrose pseudo-inverse of each matrix (singular values below ``rcond * max`` dropped)."""
    x = _matrix("pinv", x, square=False)
    cutoff = 1e-15 if rcond is None else validate_number("pinv", "rcond", rcond, minimum=0)
    return call_without_gradient("pinv", lambda xp, a: _nan_where_not_finite(
        xp, a, lambda finite: (xp.linalg.pinv(finite, rcond=cutoff),))[0], x, half_in_float32=True)


def lstsq(a, b, rcond=None):
    """The least-squares solution ``x`` of ``a @ x = b``; no gradient."""
    a = _matrix("lstsq", a, square=False)
    b = _as_tensor("lstsq", operand("lstsq", b), allow_bool=False)
    if a.ndim != 2 or b.ndim not in (1, 2) or b.shape[0] != a.shape[0] or a.size == 0:
        raise ValueError(f"lstsq expects a matrix a (m, n) and b of shape (m,) or (m, k), received {a.shape} and "
                         f"{b.shape}.")
    if rcond is not None:
        rcond = validate_number("lstsq", "rcond", rcond, minimum=0)

    def solve_finite(xp, m, v):
        # LAPACK does not converge on NaN or inf: solve with them zeroed, then NaN where they reach
        # (every column for a bad matrix, the columns of a bad right-hand side), as TensorFlow's answer.
        finite_m, finite_v = xp.isfinite(m), xp.isfinite(v)
        out = xp.linalg.lstsq(xp.where(finite_m, m, 0), xp.where(finite_v, v, 0), rcond=rcond)[0]
        return xp.where(~finite_m.all() | ~finite_v.all(axis=0), xp.nan, out).astype(out.dtype)

    return call_without_gradient("lstsq", solve_finite, a, b, half_in_float32=True)


def matrix_rank(x, tol=None):
    """The rank of each matrix (singular values above ``tol``; NumPy's default tolerance)."""
    x = _matrix("matrix_rank", x, square=False)
    if tol is not None:
        tol = validate_number("matrix_rank", "tol", tol, minimum=0)
    return call_without_gradient("matrix_rank",
                                 lambda xp, a: _nan_where_not_finite(xp, a, lambda finite: (
                                     xp.asarray(xp.linalg.matrix_rank(finite, tol=tol)).astype("int32"),),
                                     fill=0)[0], x,
                                 half_in_float32=True)


def lu_factor(x):
    """SciPy's ``lu_factor``: the packed ``LU`` (unit lower below the diagonal, upper on and above) and
    0-based pivot rows, by Gaussian elimination with partial pivoting; no gradient."""
    x = _matrix("lu_factor", x).detach()
    device = x.device
    with device.activate():
        xp = device.xp
        lu = x.data.copy()
        n = lu.shape[-1]
        batch = lu.shape[:-2]
        pivots = xp.zeros(batch + (n,), dtype="int32")
        flat = lu.reshape((-1, n, n))
        flat_pivots = pivots.reshape((-1, n))
        rows = xp.arange(flat.shape[0])
        for column in range(n):
            pivot = xp.argmax(xp.abs(flat[:, column:, column]), axis=1) + column
            flat_pivots[:, column] = pivot
            current = flat[rows, column].copy()
            flat[rows, column] = flat[rows, pivot]
            flat[rows, pivot] = current
            diagonal = flat[:, column, column]
            safe = xp.where(diagonal == 0, 1, diagonal)
            flat[:, column + 1:, column] /= safe[:, None]
            flat[:, column + 1:, column + 1:] -= flat[:, column + 1:, column:column + 1] * flat[:, column:column + 1,
                                                                                                   column + 1:]
        lu = flat.reshape(lu.shape)
        pivots = flat_pivots.reshape(pivots.shape)
    return Tensor(lu, device=device), Tensor(pivots, device=device)


def norm(x, ord=None, axis=None, keepdims=False):  # noqa: A002  (keras.ops name)
    """Vector or matrix norms (``numpy.linalg.norm``'s ``ord`` values), differentiable except nuclear/2-norm
    of matrices (computed from singular values) where the singular values are repeated."""
    from minikeras.ops.math.abs_sign import abs as _abs
    from minikeras.ops.reduce import max as _max, min as _min, sum as _sum

    real_order = isinstance(ord, (int, float, numpy.integer, numpy.floating)) and not isinstance(ord, (bool, numpy.bool_))
    if not (ord is None or real_order or is_option(ord, ("fro", "nuc"))):
        raise ValueError(f"norm: ord must be None, a number, 'fro' or 'nuc', received {ord!r:.60}.")
    x = _as_tensor("norm", operand("norm", x))
    if x.dtype.kind == "c":  # the norms of complex entries are those of their moduli (real, as NumPy's)
        if ord in (2, -2, "nuc") and (axis is None and x.ndim == 2 or isinstance(axis, (tuple, list))):
            raise TypeError("norm: the spectral and nuclear norms of complex matrices are not supported.")
        x = _abs(x)
    if not is_float_dtype(x.dtype) and x.dtype.kind != "c":
        x = x.astype("float32")
    if axis is None:
        axes = tuple(range(x.ndim))
        if x.ndim not in (1, 2):  # Keras: axis=None means a vector or a matrix norm
            raise ValueError(f"norm: with axis=None the input must be 1-D or 2-D (a vector or a matrix), received "
                             f"shape {x.shape}; pass axis to take norms of higher-rank tensors.")
        if ord is not None and x.ndim not in (1, 2):
            raise ValueError(f"norm: ord={ord!r} needs a 1-D or 2-D input when axis is None, received shape "
                             f"{x.shape}.")
        if ord is None:
            return _sum(x * x, axes, keepdims) ** 0.5
    else:
        axes = tuple(validate_axis("norm", a, x.ndim) for a in (axis if isinstance(axis, (tuple, list)) else (axis,)))
        if len(set(axes)) != len(axes):
            raise ValueError(f"norm: repeated axis in {axis!r}.")
    if len(axes) == 1:
        (a,) = axes
        if ord is None or ord == 2:
            return _sum(x * x, a, keepdims) ** 0.5
        if ord == numpy.inf:
            return _max(_abs(x), a, keepdims)
        if ord == -numpy.inf:
            return _min(_abs(x), a, keepdims)
        if ord == 0:
            return _sum((x != 0).astype(x.dtype), a, keepdims)
        if isinstance(ord, str):
            raise ValueError(f"norm: ord={ord!r} is a matrix norm; vector norms take numbers.")
        return _sum(_abs(x) ** ord, a, keepdims) ** (1.0 / ord)
    if len(axes) != 2:
        raise ValueError(f"norm: axis must name 1 or 2 axes, received {axis!r}.")
    row, column = axes
    if ord is None or ord == "fro":
        return _sum(x * x, axes, keepdims) ** 0.5
    if ord in (1, -1):
        sums = _sum(_abs(x), row, True)
        result = (_max if ord == 1 else _min)(sums, column, True)
    elif ord in (numpy.inf, -numpy.inf):
        sums = _sum(_abs(x), column, True)
        result = (_max if ord == numpy.inf else _min)(sums, row, True)
    elif ord in (2, -2, "nuc"):
        from minikeras.ops.array.reshaping import moveaxis

        moved = moveaxis(x, (row, column), (-2, -1))
        values = svd(moved, compute_uv=False)
        reduced = _sum(values, -1) if ord == "nuc" else (_max(values, -1) if ord == 2 else _min(values, -1))
        from minikeras.ops.array.reshaping import expand_dims

        result = expand_dims(expand_dims(reduced, min(row, column)), max(row, column)) if keepdims else reduced
        return result
    else:
        raise ValueError(f"norm: invalid ord {ord!r} for a matrix norm.")
    if keepdims:
        return result
    from minikeras.ops.array.reshaping import squeeze

    return squeeze(result, (row, column))
