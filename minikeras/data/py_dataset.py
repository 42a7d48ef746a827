"""PyDataset (Keras 3's ``keras.utils.PyDataset``, also ``utils.Sequence``):
a dataset that returns whole batches by index, optionally loaded in
parallel.

How ``workers``, ``use_multiprocessing`` and ``max_queue_size`` are honoured:

* ``workers=1`` (the default): batches are loaded in order, on the training
  thread, one at a time.
* ``workers=N > 1``: N threads load batches ahead, at most
  ``max_queue_size`` batches in flight; they are returned in index order.
  Threads suit loaders that release the GIL (file reads, NumPy, image
  decoding).
* ``use_multiprocessing=True``: N processes instead of threads, forked at the
  start of every epoch, so each epoch sees the dataset as ``on_epoch_end``
  left it. Changes a worker makes to the dataset are not seen by the main
  process. Needs the ``fork`` start method (Linux; macOS allows it): where
  it is missing, threads are used with a warning. Batches travel back
  pickled, so they must be NumPy arrays or other picklable values.
"""
import collections
import concurrent.futures
import concurrent.futures.process
import multiprocessing
import numbers
import warnings

from minikeras.errors import WorkerDiedError


class PyDataset:
    """Base class for datasets that produce batches by index.

    Subclass it, call ``super().__init__(**kwargs)`` in ``__init__`` and
    implement ``__len__`` (batches per epoch) and ``__getitem__(index)``
    returning ``x``, ``(x, y)`` or ``(x, y, sample_weight)``. ``fit``,
    ``evaluate`` and ``predict`` take the instance as ``x``.

    Args:
        workers: how many threads (or processes) load batches ahead; 1 loads
            them on the training thread.
        use_multiprocessing: use processes instead of threads (see the
            module docstring).
        max_queue_size: the most batches loaded ahead at once.

    Example:
        >>> class Squares(PyDataset):
        ...     def __init__(self, **kwargs):
        ...         super().__init__(**kwargs)
        ...     def __len__(self):
        ...         return 4
        ...     def __getitem__(self, index):
        ...         x = numpy.full((8, 1), index, "float32")
        ...         return x, x ** 2
        >>> model.fit(Squares(workers=2), epochs=3)  # doctest: +SKIP
    """

    # Class-level defaults, for subclasses that do not call super().__init__
    # (the Keras 2 Sequence habit).
    workers = 1
    use_multiprocessing = False
    max_queue_size = 10

    def __init__(self, workers=1, use_multiprocessing=False, max_queue_size=10):
        for name, value in (("workers", workers), ("max_queue_size", max_queue_size)):
            if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
                raise ValueError(f"{type(self).__name__}: {name} must be a positive int, received {value!r}.")
        self.workers = int(workers)
        self.use_multiprocessing = bool(use_multiprocessing)
        self.max_queue_size = int(max_queue_size)

    def __getitem__(self, index):
        """Returns batch number ``index`` (0 <= index < len(self))."""
        raise NotImplementedError(f"{type(self).__name__} must implement __getitem__(self, index).")

    def __len__(self):
        """Returns the number of batches in one epoch."""
        raise NotImplementedError(f"{type(self).__name__} must implement __len__(self).")

    @property
    def num_batches(self):
        """Batches per epoch, or None for an endless dataset (no ``__len__``:
        then give ``fit`` a ``steps_per_epoch``)."""
        try:
            return len(self)
        except NotImplementedError:
            return None

    def on_epoch_begin(self):
        """Called before each epoch's first batch."""

    def on_epoch_end(self):
        """Called after each epoch (for example to reshuffle)."""


def num_batches(dataset):
    """Batches per epoch of a PyDataset or any object with ``__len__``, or None."""
    if isinstance(dataset, PyDataset):
        return dataset.num_batches
    return len(dataset)


def iterate_batches(dataset, steps):
    """Yields ``dataset[0]`` ... ``dataset[steps - 1]`` in order, loading ahead
    with the dataset's workers (see the module docstring)."""
    workers = getattr(dataset, "workers", 1) or 1
    use_processes = bool(getattr(dataset, "use_multiprocessing", False))
    if workers <= 1 and not use_processes:
        for index in range(steps):
            yield dataset[index]
        return
    executor, fetch = _executor(dataset, workers, use_processes)
    ahead = max(1, int(getattr(dataset, "max_queue_size", 10) or 1))
    pending = collections.deque()  # (batch index, future)
    next_index = 0
    try:
        while next_index < steps and len(pending) < ahead:
            pending.append((next_index, _submit(dataset, executor, fetch, next_index, pending)))
            next_index += 1
        while pending:
            index, future = pending.popleft()
            batch = _result(dataset, index, future, pending)
            if next_index < steps:
                pending.append((next_index, _submit(dataset, executor, fetch, next_index, pending)))
                next_index += 1
            yield batch
    finally:  # also when training stops early and the generator is closed
        for _, future in pending:
            future.cancel()
        executor.shutdown(wait=True)


def _result(dataset, index, future, pending):
    """The batch ``future`` loads; a worker process that died (killed for
    memory, a crash in native code, ``os._exit``) becomes an error naming the
    dataset and the batches it was loading, instead of a bare BrokenProcessPool."""
    try:
        return future.result()
    except concurrent.futures.process.BrokenProcessPool as error:
        raise _worker_died(dataset, f"while batch {index} was being loaded", [index], pending) from error


def _submit(dataset, executor, fetch, index, pending):
    """Ask a worker for batch ``index``: the pool refuses (BrokenProcessPool)
    when a worker died after its last batch came back, e.g. one that called
    ``os._exit`` while this process was training on that batch."""
    try:
        return executor.submit(fetch, index)
    except concurrent.futures.process.BrokenProcessPool as error:
        raise _worker_died(dataset, f"before batch {index} could be asked for", [], pending) from error


def _worker_died(dataset, when, indices, pending):
    in_flight = indices + [other for other, _ in pending]
    return WorkerDiedError(
        f"{type(dataset).__name__}: a worker process died {when} (batches in flight: {in_flight}). The system "
        "kills a worker that runs out of memory (see dmesg), and a crash in native code or a call to os._exit "
        "ends it; run with use_multiprocessing=False to see the failure in this process.")


def _executor(dataset, workers, use_processes):
    if use_processes:
        if "fork" in multiprocessing.get_all_start_methods():
            executor = concurrent.futures.ProcessPoolExecutor(
                max_workers=workers, mp_context=multiprocessing.get_context("fork"),
                initializer=_adopt_dataset, initargs=(dataset,))
            return executor, _fetch_in_worker
        warnings.warn(f"{type(dataset).__name__}: use_multiprocessing=True needs the 'fork' start method, "
                      "which this platform lacks; loading with threads instead.", stacklevel=4)
    return concurrent.futures.ThreadPoolExecutor(max_workers=workers), dataset.__getitem__


_worker_dataset = {}


def _adopt_dataset(dataset):
    # Runs in each forked worker: the dataset is inherited, never pickled.
    _worker_dataset["dataset"] = dataset


def _fetch_in_worker(index):
    return _worker_dataset["dataset"][index]
