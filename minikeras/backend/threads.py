"""Running independent blocks of one op on several CPU cores.

minikeras parallelises its own heavy CPU ops and keeps BLAS itself
single-threaded: OpenBLAS's threads busy-wait for each other, and on a
machine where anything else competes for the cores each multi-threaded
product can stall for a scheduling quantum (benchmarks/NOTES.md, "CPU
tuning constants"). The BLAS thread count is set to 1 when the
first op needs it, unless OPENBLAS_NUM_THREADS, OMP_NUM_THREADS or
MINIKERAS_BLAS_THREADS is set in the environment, which is then respected.

NumPy's ufuncs and copies are single-threaded, and BLAS's own threads only
help the matrix product, so an op made of a copy and a product per block
(im2col convolution) uses one core for half its time. Here its blocks run
on a small pool of Python threads (NumPy releases the GIL in copies and
BLAS calls), with BLAS single-threaded meanwhile so that the threads do not
oversubscribe the cores.

``MINIKERAS_NUM_THREADS`` sets the number of threads (default: the cores
this process may run on); 1 turns it off. The thresholds that decide when
work is split are in :mod:`minikeras.backend.tuning`.

Only ``backend/`` and ``device/`` import this module: ops reach it through
their device (``CpuDevice.parallel_blocks``, ``row_blocks``, ``matmul``,
``elementwise_blocks``, ``worker_context``).
"""
import os
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy

from minikeras.backend import blas_threads, tuning
from minikeras.backend.blocks import even_slices, sum_in_order  # noqa: F401  (their old home)


def _default_count():
    if tuning.NUM_THREADS is not None:
        return tuning.NUM_THREADS
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
    """Make BLAS single-threaded once, unless the user chose a count.

    For every op-thread count, one included: the op threads are the
    parallelism, so ``MINIKERAS_NUM_THREADS=N`` means N busy threads in all.
    (BLAS left at its default with one op thread would start a thread per
    core in every process: two MPI workers on two cores, each told to use
    one thread, ran 8-14x slower so, issue 19.)
    """
    _blas["configured"] = True
    if tuning.BLAS_THREADS is not None:
        blas_threads.set_count(tuning.BLAS_THREADS)
        return
    if any(os.environ.get(name) for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS")):
        return
    blas_threads.set_count(1)


def _pool():
    with _lock:
        if _state["pool"] is None:
            _state["pool"] = ThreadPoolExecutor(num_threads(), thread_name_prefix="minikeras-op",
                                                initializer=_mark_single)
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


def _mark_single():
    """Ops in this thread run their blocks themselves (pool threads: a block
    never waits for blocks queued behind it)."""
    _local.single = True


def _in_caller():
    """Whether ops in this thread must run their blocks themselves: a pool
    thread, or a thread inside :class:`single_threaded` (a replica worker)."""
    return getattr(_local, "single", False)


def parallel_blocks(function, count, setup=None):
    """``[function(block) for block in range(count)]`` on up to
    ``num_threads()`` threads, BLAS single-threaded meanwhile.

    Blocks are claimed one at a time by whichever thread is free, so a pool
    thread that wakes late (an idle virtual CPU is slow to wake) or is
    descheduled delays nothing: the caller then
    does the blocks itself and never waits for a thread that has not
    started. Results come back in block order, so a caller that reduces them
    in that order gets the same bits for any number of threads.

    With ``setup``, each thread that takes part calls ``setup()`` once (e.g.
    for its scratch buffers) and then ``function(block, state)``.

    Everything runs in this thread when threads are off, there is one block,
    or the caller is already a pool thread (or a replica worker thread
    that asked for it with :func:`single_threaded`).
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


# The old name of tuning.PARALLEL_MATMUL_MIN (read it there: this copy does
# not follow later changes).
PARALLEL_MATMUL_MIN = tuning.PARALLEL_MATMUL_MIN


def is_parallel_matmul(a_shape, b_shape):
    """Whether :func:`matmul` splits a product of these 2-D shapes over
    the op threads (``tuning.PARALLEL_MATMUL_MIN`` multiply-adds or more)."""
    return num_threads() > 1 and a_shape[0] * a_shape[1] * b_shape[1] >= tuning.PARALLEL_MATMUL_MIN


def matmul(a, b, out=None):
    """``a @ b`` for 2-D NumPy arrays, split over the op threads when large.

    The rows of ``a`` (or, for few rows, the columns of ``b``) are divided
    into one block per thread, each a single-threaded BLAS call writing its
    part of ``out``.
    """
    rows, inner = a.shape
    cols = b.shape[1]
    if not is_parallel_matmul(a.shape, b.shape):
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
    """Within the block, this thread's ops run their blocks in the thread
    (``single=False``: on the op threads again, e.g. in a replica worker
    while the other replicas wait for it)."""

    def __init__(self, single=True):
        self._single = single

    def __enter__(self):
        self._previous = getattr(_local, "single", False)
        _local.single = self._single

    def __exit__(self, *exc):
        _local.single = self._previous


def row_blocks(xp, function, rows, elements):
    """``[function(start, stop) for each block of rows]``, the blocks shared
    among the op threads on NumPy; one call over all rows for another
    ``xp`` (one kernel per op is what a GPU wants).

    Blocks of about ``tuning.BLOCK_ELEMENTS`` elements: an op making
    several passes over a block finds it in cache, a thread that wakes late
    just takes fewer blocks, and since the blocks depend only on the size,
    not on the number of threads, sums of per-block results taken in order
    give the same bits with any number of threads. Inputs of one block run
    in the calling thread.
    """
    if xp is not numpy or rows == 0:
        return [function(0, rows)]
    blocks = even_slices(rows, -(-elements // tuning.BLOCK_ELEMENTS))
    return parallel_blocks(lambda block: function(blocks[block].start, blocks[block].stop), len(blocks))


def elementwise_blocks(function, size):
    """``[function(piece) for each flat slice]`` for an elementwise update
    of ``size`` elements: one call over ``slice(0, size)`` below
    ``tuning.ELEMENTWISE_PARALLEL_MIN``, else a few slices per op thread."""
    if size < tuning.ELEMENTWISE_PARALLEL_MIN or num_threads() == 1:
        return [function(slice(0, size))]
    pieces = even_slices(size, tuning.ELEMENTWISE_BLOCKS_PER_THREAD * num_threads())
    return parallel_blocks(lambda block: function(pieces[block]), len(pieces))
