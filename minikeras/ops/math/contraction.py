"""A two-operand einsum as one batched matrix product (``device.matmul``).

On a GPU ``xp.einsum`` is CuPy's, which contracts bfloat16 through its
failing batched matmul (``sim_cupy/_limits.py``) and is refused during a
CUDA graph capture (CuPy's cuBLAS calls are). Written as transposes,
reshapes and one ``device.matmul``, the same contraction is a
``cublasGemmEx`` / ``cublasGemmStridedBatchedEx`` with 16-bit inputs and
float32 accumulation, which a capture holds (``device/cublas_direct.py``).

Labels (already explicit, ``...`` written out) fall in five groups: batch
(both operands and the output), contracted (both operands, not the
output), free in one operand (and the output), and summed in one operand
only (summed first). Batch axes stay separate axes, so a size-1 batch axis
broadcasts as in ``matmul``.
"""
__all__ = []


def _prod(sizes):
    total = 1
    for size in sizes:
        total *= size
    return total


def contractible(first, second, output, shape_a, shape_b):
    """Whether :func:`contract` takes this einsum: no label repeated within
    an operand or the output, and every contracted or free label of one size."""
    if any(len(set(labels)) != len(labels) for labels in (first, second, output)):
        return False
    sizes_a, sizes_b = dict(zip(first, shape_a)), dict(zip(second, shape_b))
    return all(sizes_a[label] == sizes_b[label] for label in set(first) & set(second) if label not in output) and \
        set(output) <= set(first) | set(second)


def contract(device, first, second, output, a, b):
    """``einsum(f"{first},{second}->{output}", a, b)`` by ``device.matmul``
    (see the module docstring; check :func:`contractible` first)."""
    xp = device.xp
    in_a, in_b, in_out = set(first), set(second), set(output)
    summed_a = "".join(label for label in first if label not in in_b and label not in in_out)
    summed_b = "".join(label for label in second if label not in in_a and label not in in_out)
    if summed_a:
        a = a.sum(axis=tuple(first.index(label) for label in summed_a))
        first = "".join(label for label in first if label not in summed_a)
    if summed_b:
        b = b.sum(axis=tuple(second.index(label) for label in summed_b))
        second = "".join(label for label in second if label not in summed_b)
    batch = [label for label in output if label in in_a and label in in_b]
    contracted = [label for label in first if label in in_b and label not in in_out]
    free_a = [label for label in first if label not in in_b]
    free_b = [label for label in second if label not in in_a]
    sizes_a, sizes_b = dict(zip(first, a.shape)), dict(zip(second, b.shape))
    k = _prod(sizes_a[label] for label in contracted)
    m, n = _prod(sizes_a[label] for label in free_a), _prod(sizes_b[label] for label in free_b)
    a = a.transpose([first.index(label) for label in batch + free_a + contracted])
    a = a.reshape(tuple(sizes_a[label] for label in batch) + (m, k))
    b = b.transpose([second.index(label) for label in batch + contracted + free_b])
    b = b.reshape(tuple(sizes_b[label] for label in batch) + (k, n))
    product = device.matmul(a, b)  # (batch..., m, n), batch sizes broadcast
    sizes = {**sizes_a, **sizes_b}
    for label, size in zip(batch, product.shape):
        sizes[label] = size
    grouped = batch + free_a + free_b
    product = product.reshape(tuple(sizes[label] for label in grouped))
    order = [grouped.index(label) for label in output]
    return product.transpose(order) if order != list(range(len(order))) else product
