"""Running independent blocks of one op on several CPU cores.

minikeras parallelises its own heavy CPU ops and keeps BLAS itself
single-threaded: OpenBLAS's threads busy-wait for each other, and on a
machine where anything else competes for the cores each multi-threaded
product can stall for a scheduling quantum (measured on the 2-core target
machine under load: an MLP training step took 76 ms with two OpenBLAS
threads and 5.6 ms with one). The BLAS thread count is set to 1 when the
first op needs it, unless OPENBLAS_NUM_THREADS, OMP_NUM_THREADS or
MINIKERAS_BLAS_THREADS is set in the environment, which is then respected.

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

import numpy

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


_blas = {"configured": False}


def _configure_blas():
    """Make BLAS single-threaded once, unless the user chose a count."""
    _blas["configured"] = True
    if any(os.environ.get(name) for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MINIKERAS_BLAS_THREADS")):
        count = os.environ.get("MINIKERAS_BLAS_THREADS")
        if count:
            blas_threads.set_count(int(count))
        return
    if num_threads() > 1:
        blas_threads.set_count(1)


def _pool():
    with _lock:
        if _state["pool"] is None:
            _state["pool"] = ThreadPoolExecutor(num_threads(), thread_name_prefix="minikeras-op")
        return _state["pool"]


class _Claims:
    """Hands out block indices 0..count-1, each once, to whichever thread asks
    first, and remembers which threads got any (they must be waited for)."""

    def __init__(self, count):
        self._lock = threading.Lock()
        self._next = 0
        self._count = count
        self._started = set()

    def take(self, worker):
        """The next unclaimed block for ``worker``, or None when none is left."""
        with self._lock:
            block = self._next
            if block >= self._count:
                return None
            self._next += 1
            self._started.add(worker)
            return block

    def started(self):
        """The workers that got at least one block so far."""
        with self._lock:
            return set(self._started)

    def stop(self):
        """No more blocks for anyone (after an error)."""
        with self._lock:
            self._next = self._count


def _in_caller():
    """Whether ops in this thread must run their blocks themselves."""
    name = threading.current_thread().name
    return getattr(_local, "single", False) or name.startswith(("minikeras-op", "minikeras-replica"))


def parallel_blocks(function, count, setup=None):
    """``[function(block) for block in range(count)]`` on up to
    ``num_threads()`` threads, BLAS single-threaded meanwhile.

    Blocks are claimed one at a time by whichever thread is free, so a pool
    thread that wakes late (an idle virtual CPU takes 0.1-0.2 ms to wake on
    the target machine) or is descheduled delays nothing: the caller then
    does the blocks itself and never waits for a thread that has not
    started. Results come back in block order, so a caller that reduces them
    in that order gets the same bits for any number of threads.

    With ``setup``, each thread that takes part calls ``setup()`` once (e.g.
    for its scratch buffers) and then ``function(block, state)``.

    Everything runs in this thread when threads are off, there is one block,
    or the caller is already a pool thread (or a MirroredModel replica
    thread that asked for it with :func:`single_threaded`).
    """
    if not _blas["configured"]:
        _configure_blas()
    workers = min(num_threads(), count)
    job = _Job(function, setup, count)
    if workers <= 1 or _in_caller():
        _run_blocks(job, 0)
        return job.results
    pool = _pool()
    futures = [pool.submit(_run_blocks, job, worker) for worker in range(1, workers)]
    try:
        _run_blocks(job, 0)  # the calling thread works too, until no block is left
    finally:
        # Threads that got no block will find none when they wake: only the
        # others are waited for (their writes must end before we return).
        started = job.claims.started()
        errors = []
        for worker, future in enumerate(futures, start=1):
            if worker in started:
                error = future.exception()
                if error is not None:
                    errors.append(error)
        results = job.results
        # A task still queued for a thread that has not woken holds the job:
        # let go of the function (and the arrays it refers to) and the
        # results now, not when that thread gets to it.
        job.function = job.setup = job.results = None
    if errors:
        raise errors[0]
    return results


class _Job:
    """What the threads of one parallel_blocks call share."""

    __slots__ = ("function", "setup", "results", "claims")

    def __init__(self, function, setup, count):
        self.function, self.setup = function, setup
        self.results = [None] * count
        self.claims = _Claims(count)


def _run_blocks(job, worker):
    """Claim and run blocks of ``job`` until none is left."""
    block = job.claims.take(worker)
    if block is None:
        return
    try:
        function, setup, results = job.function, job.setup, job.results
        state = setup() if setup is not None else None
        while block is not None:
            results[block] = function(block) if setup is None else function(block, state)
            block = job.claims.take(worker)
    except BaseException:
        job.claims.stop()
        raise


def even_slices(total, count):
    """At most ``count`` slices splitting ``range(total)`` evenly (none empty)."""
    step = max(1, -(-total // max(count, 1)))
    return [slice(start, min(total, start + step)) for start in range(0, total, step)]


# Products smaller than this many multiply-adds run in one thread: handing
# work to another thread costs about 0.1 ms (measured on the 2-core machine).
PARALLEL_MATMUL_MIN = 1 << 25


def matmul(a, b, out=None):
    """``a @ b`` for 2-D NumPy arrays, split over the op threads when large.

    The rows of ``a`` (or, for few rows, the columns of ``b``) are divided
    into one block per thread, each a single-threaded BLAS call writing its
    part of ``out``.
    """
    rows, inner = a.shape
    cols = b.shape[1]
    if rows * inner * cols < PARALLEL_MATMUL_MIN or num_threads() == 1:
        if not _blas["configured"]:
            _configure_blas()
        return numpy.matmul(a, b, out=out)
    if out is None:
        out = numpy.empty((rows, cols), dtype=numpy.result_type(a.dtype, b.dtype))
    # Each block packs its own share of the split operand and all of the
    # other one: split the larger operand.
    split_rows = rows >= cols
    blocks = even_slices(rows if split_rows else cols, num_threads())

    def part(block):
        piece = blocks[block]
        if split_rows:
            numpy.matmul(a[piece], b, out=out[piece])
        else:
            numpy.matmul(a, b[:, piece], out=out[:, piece])

    parallel_blocks(part, len(blocks))
    return out


class single_threaded:  # noqa: N801  (used as a context manager)
    """Within the block, this thread's ops run their blocks in the thread."""

    def __enter__(self):
        self._previous = getattr(_local, "single", False)
        _local.single = True

    def __exit__(self, *exc):
        _local.single = self._previous


# Elements per block of ``row_blocks``: big enough that a block's few ufunc
# calls cost much more than their dispatch, small enough (1 MB of float32)
# that a block stays in cache between the passes a function makes over it.
BLOCK_ELEMENTS = 1 << 18


def row_blocks(xp, function, rows, elements):
    """``[function(start, stop) for each block of rows]``, the blocks shared
    among the op threads on NumPy; one call over all rows on a GPU (one
    kernel per op is what a GPU wants).

    Blocks of about BLOCK_ELEMENTS elements: an op making several passes
    over a block finds it in cache (measured: 2x2 max pooling of a
    1024x26x26x32 batch 19 -> 10 ms against two halves), a thread that
    wakes late just takes fewer blocks, and since the blocks depend only on
    the size, not on the number of threads, sums of per-block results taken
    in order give the same bits with any number of threads. Inputs of one
    block run in the calling thread.
    """
    if xp is not numpy or rows == 0:
        return [function(0, rows)]
    blocks = even_slices(rows, -(-elements // BLOCK_ELEMENTS))
    return parallel_blocks(lambda block: function(blocks[block].start, blocks[block].stop), len(blocks))


def sum_in_order(xp, parts, shape=None, dtype=None):
    """The sum of per-block results in block order, so that it has the same
    bits however the blocks were spread over threads; ``zeros(shape, dtype)``
    when there are none. The parts are left unchanged."""
    if not parts:
        return xp.zeros(shape, dtype)
    total = parts[0].copy()
    for part in parts[1:]:
        total += part
    return total
