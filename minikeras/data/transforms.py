"""The Dataset transformations and constructors (what ``Dataset.map``,
``.batch``, ``.from_tensor_slices`` ... return), one small class each.

Every ``_elements()`` is a generator over one pass, reading its input's
``_elements()`` (the public ``__iter__`` adds only the arrays' ``.numpy()``),
and closes its input's pass when it is closed itself, so stopping early
anywhere in a pipeline (``take``, ``break``) stops the threads upstream.
"""
import threading
import warnings

import numpy

from minikeras.data import cache_file
from minikeras.data import elements
from minikeras.data.dataset import INFINITE_CARDINALITY, UNKNOWN_CARDINALITY, Dataset
from minikeras.data.threads import map_threads, parallel_map, prefetch_buffer, prefetched
from minikeras._support import nest

_UNKNOWN_OR_INFINITE = (INFINITE_CARDINALITY, UNKNOWN_CARDINALITY)


def _close(iterator):
    close = getattr(iterator, "close", None)
    if close is not None:
        close()


class _Unary(Dataset):
    """A transformation of one input dataset (``self._input``)."""

    def __init__(self, input_dataset):
        self._input = input_dataset

    def _cardinality(self):
        return self._input._cardinality()


class MapDataset(_Unary):
    def __init__(self, input_dataset, function, num_parallel_calls):
        super().__init__(input_dataset)
        self._function = function
        self._threads = map_threads(num_parallel_calls)

    def _call(self, element):
        return elements.as_element(elements.call_on_element(self._function, element), "Dataset.map")

    def _elements(self):
        source = self._input._elements()
        try:
            if self._threads <= 1:
                for element in source:
                    yield self._call(element)
            else:
                yield from parallel_map(source, self._call, self._threads)
        finally:
            _close(source)


class FilterDataset(_Unary):
    def __init__(self, input_dataset, predicate):
        super().__init__(input_dataset)
        self._predicate = predicate

    def _cardinality(self):
        return UNKNOWN_CARDINALITY

    def _elements(self):
        source = self._input._elements()
        try:
            for element in source:
                keep = elements.call_on_element(self._predicate, element)
                if elements.as_scalar_bool(keep, "Dataset.filter"):
                    yield element
        finally:
            _close(source)


class BatchDataset(_Unary):
    def __init__(self, input_dataset, batch_size, drop_remainder):
        super().__init__(input_dataset)
        self._batch_size, self._drop_remainder = batch_size, drop_remainder

    def _cardinality(self):
        count = self._input._cardinality()
        if count in _UNKNOWN_OR_INFINITE:
            return count
        return count // self._batch_size if self._drop_remainder else -(-count // self._batch_size)

    def _elements(self):
        source = self._input._elements()
        try:
            pending = []
            for element in source:
                pending.append(element)
                if len(pending) == self._batch_size:
                    yield elements.stack_elements(pending)
                    pending = []
            if pending and not self._drop_remainder:
                yield elements.stack_elements(pending)
        finally:
            _close(source)


class UnbatchDataset(_Unary):
    def _cardinality(self):
        return UNKNOWN_CARDINALITY  # as tf.data: a batch's size is not known ahead

    def _elements(self):
        source = self._input._elements()
        try:
            for batch in source:
                yield from elements.split_batch(batch)
        finally:
            _close(source)


class ShuffleDataset(_Unary):
    def __init__(self, input_dataset, buffer_size, seed, reshuffle_each_iteration):
        super().__init__(input_dataset)
        self._buffer_size = buffer_size
        # Unseeded: drawn from NumPy's global generator, so utils.set_random_seed makes runs repeat.
        self._seed = int(numpy.random.randint(2 ** 31 - 1)) if seed is None else int(seed)
        self._reshuffle = reshuffle_each_iteration
        self._passes = 0
        self._lock = threading.Lock()

    def _elements(self):
        with self._lock:
            pass_index, self._passes = self._passes, self._passes + 1
        rng = numpy.random.default_rng([self._seed, pass_index if self._reshuffle else 0])
        source = self._input._elements()
        try:
            buffer = []
            for element in source:
                if len(buffer) < self._buffer_size:
                    buffer.append(element)
                    continue
                index = int(rng.integers(len(buffer)))
                yield buffer[index]
                buffer[index] = element
            while buffer:
                index = int(rng.integers(len(buffer)))
                buffer[index], buffer[-1] = buffer[-1], buffer[index]
                yield buffer.pop()
        finally:
            _close(source)


class CacheDataset(_Unary):
    def __init__(self, input_dataset, filename):
        super().__init__(input_dataset)
        self._filename = filename
        self._cached = None  # the elements, once a pass completed (memory cache)
        self._lock = threading.Lock()
        self._filling = False

    def _elements(self):
        if self._cached is not None:
            yield from self._cached
            return
        if self._filename and cache_file.exists(self._filename):
            yield from cache_file.read(self._filename)
            return
        with self._lock:
            fill, self._filling = not self._filling, True
        if not fill:  # another pass is filling the cache: read the input directly
            yield from self._input._elements()
            return
        writer = cache_file.Writer(self._filename) if self._filename else None
        kept, complete = [], False
        source = self._input._elements()
        try:
            for element in source:
                element = nest.map_structure(_read_only, element)
                if writer is not None:
                    writer.add(element)
                else:
                    kept.append(element)
                yield element
            complete = True
        finally:
            _close(source)
            with self._lock:
                self._filling = False
            if writer is not None:
                writer.finish(complete)
            if complete and writer is None:
                self._cached = kept
            elif not complete:
                warnings.warn("The calling iterator did not fully read the dataset being cached. In order to avoid "
                              "unexpected truncation of the dataset, the partially cached contents of the dataset "
                              "will be discarded. This can happen if you have an input pipeline similar to "
                              "`dataset.cache().take(k).repeat()`. You should use `dataset.take(k).cache().repeat()` "
                              "instead.", stacklevel=2)


def _read_only(leaf):
    # Cached arrays are replayed to every later pass: an in-place change would alter the cache
    # (tf.data's tensors are immutable).
    if isinstance(leaf, numpy.ndarray):  # host arrays only: elements never live on a device
        return numpy.lib.stride_tricks.as_strided(leaf, writeable=False)  # a read-only view
    return leaf


class PrefetchDataset(_Unary):
    def __init__(self, input_dataset, buffer_size):
        super().__init__(input_dataset)
        self._buffer_size = buffer_size

    def _elements(self):
        if self._buffer_size == 0:
            return self._input._elements()
        return prefetched(self._input._elements, prefetch_buffer(self._buffer_size))


class TakeDataset(_Unary):
    def __init__(self, input_dataset, count):
        super().__init__(input_dataset)
        self._count = count

    def _cardinality(self):
        count = self._input._cardinality()
        if self._count == -1 or count == UNKNOWN_CARDINALITY:
            return count
        return self._count if count == INFINITE_CARDINALITY else min(count, self._count)

    def _elements(self):
        if self._count == 0:
            return
        source = self._input._elements()
        try:
            for taken, element in enumerate(source, 1):
                yield element
                if taken == self._count:
                    return
        finally:
            _close(source)


class SkipDataset(_Unary):
    def __init__(self, input_dataset, count):
        super().__init__(input_dataset)
        self._count = count

    def _cardinality(self):
        count = self._input._cardinality()
        if count in _UNKNOWN_OR_INFINITE:
            return count
        return 0 if self._count == -1 else max(0, count - self._count)

    def _elements(self):
        if self._count == -1:
            return
        source = self._input._elements()
        try:
            for index, element in enumerate(source):
                if index >= self._count:
                    yield element
        finally:
            _close(source)


class RepeatDataset(_Unary):
    def __init__(self, input_dataset, count):
        super().__init__(input_dataset)
        self._count = count

    def _cardinality(self):
        count = self._input._cardinality()
        if count == 0:
            return 0
        if self._count == -1:
            return INFINITE_CARDINALITY
        return count if count in _UNKNOWN_OR_INFINITE else count * self._count

    def _elements(self):
        passes = 0
        while self._count == -1 or passes < self._count:
            produced = False
            for element in self._input._elements():
                produced = True
                yield element
            passes += 1
            if not produced:  # an empty input repeated forever is still empty
                return


class ConcatenateDataset(Dataset):
    def __init__(self, first, second):
        self._first, self._second = first, second

    def _cardinality(self):
        counts = (self._first._cardinality(), self._second._cardinality())
        if INFINITE_CARDINALITY in counts:
            return INFINITE_CARDINALITY
        return UNKNOWN_CARDINALITY if UNKNOWN_CARDINALITY in counts else sum(counts)

    def _elements(self):
        yield from self._first._elements()
        yield from self._second._elements()


class ZipDataset(Dataset):
    def __init__(self, datasets):
        for dataset in nest.flatten(datasets):
            if not isinstance(dataset, Dataset):
                raise TypeError(f"Dataset.zip expects datasets (in a tuple or dict), received "
                                f"{type(dataset).__name__}.")
        self._datasets = datasets

    def _cardinality(self):
        counts = [dataset._cardinality() for dataset in nest.flatten(self._datasets)]
        if UNKNOWN_CARDINALITY in counts:
            return UNKNOWN_CARDINALITY
        finite = [count for count in counts if count != INFINITE_CARDINALITY]
        return min(finite) if finite else INFINITE_CARDINALITY

    def _elements(self):
        sources = [dataset._elements() for dataset in nest.flatten(self._datasets)]
        try:
            for row in zip(*sources):
                yield nest.pack_sequence_as(self._datasets, list(row))
        finally:
            for source in sources:
                _close(source)


class TensorSlicesDataset(Dataset):
    """Rows of arrays (``Dataset.from_tensor_slices``); random access by index."""

    def __init__(self, tensors):
        # A Python list is one tensor to tf (not a structure); tuples and dicts are structures.
        structure = nest.traverse(lambda node: _as_array(node) if isinstance(node, list) else None, tensors)
        self._structure = nest.map_structure(lambda leaf: _as_array(leaf), structure)
        self._leaves = nest.flatten(self._structure)
        sizes = {len(leaf) for leaf in self._leaves}
        if len(sizes) != 1:
            raise ValueError(f"Dataset.from_tensor_slices expects every component to have the same size along its "
                             f"first axis, received sizes {sorted(sizes)}.")
        self._size = sizes.pop()

    def _cardinality(self):
        return self._size

    def __getitem__(self, index):
        return nest.pack_sequence_as(self._structure, [leaf[index] for leaf in self._leaves])

    def _elements(self):
        for index in range(self._size):
            yield self[index]


def _as_array(value):
    if isinstance(value, list):
        try:
            array = numpy.asarray(value)
        except ValueError as error:
            raise ValueError(f"Dataset.from_tensor_slices cannot make an array from a ragged list: {error}") from None
    else:
        array = elements.as_leaf(value, "Dataset.from_tensor_slices")
    if isinstance(array, (str, bytes)) or array is None or numpy.ndim(array) == 0:
        raise ValueError(f"Dataset.from_tensor_slices expects arrays with a first axis to slice, received "
                         f"{str(value)[:60]!r}.")
    return array
