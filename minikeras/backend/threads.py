"""Running independent blocks of one op on several CPU cores.

NumPy's ufuncs and copies are single-threaded, and BLAS's own threads only
help the matrix product, so an op made of a copy and a product per block
(im2col convolution) uses one core for half its time. Here its blocks run
on a small pool of Python threads (NumPy releases the GIL in copies and
BLAS calls), with BLAS single-threaded meanwhile so that the threads do not
oversubscribe the cores.

``MINIKERAS_NUM_THREADS`` sets the number of threads (default: the cores
this process may run on); 1 turns it off.
"""
import os
import threading
from concurrent.futures import ThreadPoolExecutor

from minikeras.backend import blas_threads


def _default_count():
    value = os.environ.get("MINIKERAS_NUM_THREADS")
    if value:
        try:
            return max(1, int(value))
        except ValueError:
            raise ValueError(f"MINIKERAS_NUM_THREADS must be a positive int, received {value!r}.") from None
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


_state = {"count": None, "pool": None}
_lock = threading.Lock()
_local = threading.local()


def num_threads():
    """Threads used for the blocks of one op."""
    if _state["count"] is None:
        _state["count"] = _default_count()
    return _state["count"]


def set_num_threads(count):
    """Use ``count`` threads per op (1: run blocks in the calling thread)."""
    if isinstance(count, bool) or not isinstance(count, int) or count < 1:
        raise ValueError(f"set_num_threads expects a positive int, received {count!r}.")
    with _lock:
        _state["count"] = count
        if _state["pool"] is not None:
            _state["pool"].shutdown(wait=False)
            _state["pool"] = None


def _pool():
    with _lock:
        if _state["pool"] is None:
            _state["pool"] = ThreadPoolExecutor(num_threads(), thread_name_prefix="minikeras-op")
        return _state["pool"]


def parallel_blocks(function, count):
    """``[function(worker, workers) for worker in range(workers)]`` on up to
    ``count`` threads, BLAS single-threaded meanwhile.

    Each worker handles every ``workers``-th block itself. Falls back to one
    call in this thread when threads are off, there is one block, or the
    caller is already a pool thread (or a MirroredModel replica thread that
    asked for it with :func:`single_threaded`).
    """
    workers = min(num_threads(), count)
    name = threading.current_thread().name
    if workers <= 1 or getattr(_local, "single", False) or name.startswith(("minikeras-op", "minikeras-replica")):
        return [function(0, 1)]
    with blas_threads.at_most(1):
        futures = [_pool().submit(function, worker, workers) for worker in range(workers)]
        return [future.result() for future in futures]


class single_threaded:  # noqa: N801  (used as a context manager)
    """Within the block, this thread's ops run their blocks in the thread."""

    def __enter__(self):
        self._previous = getattr(_local, "single", False)
        _local.single = True

    def __exit__(self, *exc):
        _local.single = self._previous
