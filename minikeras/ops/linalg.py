"""``keras.ops.linalg``: linear algebra on the last two axes (see ``minikeras.ops.math.linalg``).

``jvp`` (forward-mode differentiation) is not provided: see README,
"keras.ops: names not supported".
"""

from minikeras.ops.math.linalg import (  # noqa: F401
    cholesky, cholesky_inverse, det, eig, eigh, inv, lstsq, lu_factor, matrix_rank, norm, pinv, qr,
    solve, solve_triangular, svd,
)

__all__ = [
    "cholesky", "cholesky_inverse", "det", "eig", "eigh", "inv", "lstsq", "lu_factor",
    "matrix_rank", "norm", "pinv", "qr", "solve", "solve_triangular", "svd",
]
