"""The two places a ``Dataset`` uses threads: a prefetching producer (one
background thread filling a bounded queue) and a parallel ``map`` (a pool
applying the function to several elements at once, results in order).

Both stop their threads when the consumer stops early (a ``take``, a
``break``, a training run that ends): closing the generator they return
signals the producer and joins it. An exception raised while producing an
element is raised in the consumer's thread, where the element was wanted.
"""
import collections
import concurrent.futures
import os
import queue
import threading

from minikeras.data.elements import pipeline_scope

AUTOTUNE = -1
# What AUTOTUNE means here (tf.data tunes these at run time; minikeras fixes them):
AUTOTUNE_PREFETCH = 2  # elements (batches, at the end of a pipeline) kept ready ahead of the consumer
AUTOTUNE_MAP_THREADS = 4  # at most this many map calls at once (capped by the cores)

_ELEMENT, _END, _ERROR = 0, 1, 2


def prefetch_buffer(buffer_size):
    """The queue bound for ``buffer_size`` (AUTOTUNE: `AUTOTUNE_PREFETCH`)."""
    return AUTOTUNE_PREFETCH if buffer_size == AUTOTUNE else buffer_size


def map_threads(num_parallel_calls):
    """Threads for ``num_parallel_calls`` (None: 1; AUTOTUNE: up to `AUTOTUNE_MAP_THREADS`)."""
    if num_parallel_calls is None:
        return 1
    if num_parallel_calls == AUTOTUNE:
        return max(1, min(AUTOTUNE_MAP_THREADS, os.cpu_count() or 1))
    return num_parallel_calls


def prefetched(make_elements, buffer_size):
    """Yields what ``make_elements()`` (a generator) yields, produced ahead in
    a background thread, at most ``buffer_size`` elements waiting.

    The producer runs in `pipeline_scope` (the CPU, no gradients), as
    tf.data's input pipelines do.
    """
    waiting = queue.Queue(maxsize=max(1, buffer_size))
    stop = threading.Event()

    def put(kind, value):
        waiting.put((kind, value))
        return not stop.is_set()

    def produce():
        elements = None
        try:
            with pipeline_scope():
                elements = make_elements()
                for element in elements:
                    if not put(_ELEMENT, element):
                        return
            put(_END, None)
        except BaseException as error:  # re-raised in the consumer's thread
            put(_ERROR, error)
        finally:
            if elements is not None:
                elements.close()

    producer = threading.Thread(target=produce, name="minikeras-data-prefetch", daemon=True)
    producer.start()
    try:
        while True:
            kind, value = waiting.get()
            if kind == _END:
                return
            if kind == _ERROR:
                raise value
            yield value
    finally:
        stop.set()
        # A producer blocked on a full queue gets its slot, sees ``stop`` and returns.
        while producer.is_alive():
            try:
                waiting.get(timeout=0.05)
            except queue.Empty:
                pass
        producer.join()


def parallel_map(elements, call, threads):
    """Yields ``call(element)`` for each element, in order, computing up to
    ``2 * threads`` of them at once in a pool of ``threads`` threads.

    The first element is mapped in the calling thread before the pool
    starts, so a layer the function calls is built once (tf.data traces the
    function once before running it in parallel).
    """
    elements = iter(elements)
    pending = collections.deque()
    pool = None
    try:
        for element in elements:
            if pool is None:
                yield call(element)
                pool = concurrent.futures.ThreadPoolExecutor(max_workers=threads,
                                                             thread_name_prefix="minikeras-data-map")
                continue
            pending.append(pool.submit(call, element))
            if len(pending) >= 2 * threads:
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()
    finally:
        for future in pending:
            future.cancel()
        if pool is not None:
            pool.shutdown(wait=True)
        close = getattr(elements, "close", None)
        if close is not None:
            close()
