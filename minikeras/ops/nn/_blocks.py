"""Block helpers for the fused ops in this package, as thin calls on the
device (``device.row_blocks``, ``device.matmul_all``), so that an op never
reaches for the CPU's thread pool itself. The tuning sizes live in
:mod:`minikeras.backend.tuning`.
"""
from minikeras.backend import tuning
from minikeras.backend.blocks import sum_in_order as _sum_in_order

__all__ = ["row_blocks", "sum_in_order", "parallel_matmul_min", "matmul_pair"]


def parallel_matmul_min():
    """Products with fewer multiply-adds than this run in one thread."""
    return tuning.PARALLEL_MATMUL_MIN


def row_blocks(device, function, rows, elements):
    """``[function(start, stop) for each block of rows]``: ``device.row_blocks``
    (cache-sized blocks shared among the CPU's op threads; one call over all
    rows on a GPU). Sum per-block results with :func:`sum_in_order`."""
    return device.row_blocks(function, rows, elements)


def sum_in_order(xp, parts):
    """The sum of per-block results in block order (the parts are kept)."""
    return _sum_in_order(xp, parts)


def matmul_pair(device, first, second):
    """Two independent 2-D products ``(a @ b, c @ d)`` (``device.matmul_all``)."""
    return tuple(device.matmul_all([first, second]))
