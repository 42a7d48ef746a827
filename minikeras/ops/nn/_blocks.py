"""Block helpers for the fused ops in this package, written on the device's
kernels (``device.parallel_blocks``, ``device.matmul``) so that an op never
reaches for the CPU's thread pool itself.

The two tuning sizes are read from ``minikeras.backend.threads``, their one
home (where they are measured and documented), at call time.
"""

__all__ = ["row_blocks", "sum_in_order", "parallel_matmul_min", "matmul_pair"]


def _tuning():
    from minikeras.backend import threads

    return threads


def parallel_matmul_min():
    """Products with fewer multiply-adds than this run in one thread."""
    return _tuning().PARALLEL_MATMUL_MIN


def row_blocks(device, function, rows, elements):
    """``[function(start, stop) for each block of rows]``.

    On a device with host kernels the rows split into blocks of about the
    tuned block size, shared among the op threads by
    ``device.parallel_blocks``; the blocks depend only on the size, so sums
    of per-block results taken in order (:func:`sum_in_order`) have the
    same bits for any number of threads. Elsewhere one call over all rows
    (one kernel per op is what a GPU wants).
    """
    if not device.host_kernels or rows == 0:
        return [function(0, rows)]
    count = -(-elements // _tuning().BLOCK_ELEMENTS)
    step = max(1, -(-rows // max(count, 1)))
    blocks = [(start, min(rows, start + step)) for start in range(0, rows, step)]
    return device.parallel_blocks(lambda block, _: function(*blocks[block]), len(blocks))


def sum_in_order(xp, parts):
    """The sum of per-block results in block order (the parts are kept)."""
    total = parts[0].copy()
    for part in parts[1:]:
        total += part
    return total


def matmul_pair(device, first, second):
    """Two independent 2-D products ``(a @ b, c @ d)``. Two products each too
    small to split run at once, one per op thread (in order where the
    device has no threads); larger ones are split in turn by
    ``device.matmul``."""
    small = all(a.shape[0] * a.shape[1] * b.shape[1] < parallel_matmul_min() for a, b in (first, second))
    if small:
        pair = (first, second)
        return tuple(device.parallel_blocks(lambda block, _: pair[block][0] @ pair[block][1], 2))
    return device.matmul(*first), device.matmul(*second)
