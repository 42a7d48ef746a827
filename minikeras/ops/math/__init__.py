"""Math ops: arithmetic, unary functions, comparisons, matmul."""
