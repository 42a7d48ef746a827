"""``FileDataset``: what the data utilities return (the directory loaders,
``timeseries_dataset_from_array``, ``split_dataset``).

A ``minikeras.data.Dataset`` (tf.data's methods: ``map``, ``shuffle``,
``cache``, ``prefetch``, ``cardinality()`` ...) whose elements are batches
loaded on demand from a list of samples (file paths, window starts, rows).
Iterating it loads the batches in background threads, a few ahead of the
consumer, as the ``tf.data`` pipeline Keras builds does
(``num_parallel_calls=AUTOTUNE`` then ``prefetch(AUTOTUNE)``). With
``shuffle`` the samples are reshuffled before every pass but the first
(which uses the order drawn when the dataset was made).

Beyond tf.data it keeps random access: ``len(ds)`` batches and ``ds[i]``,
batch ``i`` in the current order.
"""
import threading

import numpy

from minikeras.data.dataset import Dataset
from minikeras.data.elements import check_count
from minikeras.data.threads import AUTOTUNE, map_threads, parallel_map, prefetch_buffer, prefetched


class FileDataset(Dataset):
    """Batches of samples loaded on demand.

    Iterating it gives the batches, ``(x, y)`` or ``x`` alone when there are
    no labels; ``fit``/``evaluate``/``predict`` take it as ``x``.

    Args:
        samples: what ``load`` reads (file paths, or rows of an array).
        load: ``load(samples_of_a_batch) -> x`` (a stacked batch array, or
            any batch structure).
        labels: encoded labels (one row per sample) or None.
        batch_size: samples per batch; None gives single samples (no batch axis).
        shuffle: reshuffle the order before every pass after the first.
        seed: the reshuffling's seed (None: fresh entropy).
        class_names, file_paths: Keras's attributes of the returned dataset.
    """

    def __init__(self, samples, load, labels=None, batch_size=32, shuffle=False, seed=None, class_names=None,
                 file_paths=None):
        if batch_size is not None and (isinstance(batch_size, bool) or not isinstance(batch_size, int)
                                       or batch_size < 1):
            raise ValueError(f"batch_size must be a positive int or None, received {batch_size!r}.")
        self.samples = samples
        self.labels = labels
        self.batch_size = batch_size
        self.class_names = class_names
        self.file_paths = file_paths
        self._shuffle = bool(shuffle)
        self._load = load
        self._rng = numpy.random.default_rng(seed)
        self._order = numpy.arange(len(samples))
        if shuffle:
            self._rng.shuffle(self._order)
        self._passes_started = 0
        self._lock = threading.Lock()

    def _cardinality(self):
        if self.batch_size is None:
            return len(self._order)
        return -(-len(self._order) // self.batch_size)

    def _next_order(self):
        """The order of a new pass: the current one, reshuffled unless this is the first pass."""
        with self._lock:
            if self._shuffle and self._passes_started:
                self._rng.shuffle(self._order)
            self._passes_started += 1
            return self._order.copy()

    def _load_batch(self, order, index):
        if self.batch_size is None:
            rows = order[index:index + 1]
        else:
            rows = order[index * self.batch_size:(index + 1) * self.batch_size]
        x = self._load([self.samples[row] for row in rows])
        if self.batch_size is None:
            x = x[0] if not isinstance(x, (tuple, list)) else type(x)(part[0] for part in x)
        if self.labels is None:
            return x
        y = self.labels[rows]
        return x, (y[0] if self.batch_size is None else y)

    def __getitem__(self, index):
        """Batch ``index`` (an element when ``batch_size`` is None) in the current order."""
        if not 0 <= index < len(self):
            raise IndexError(f"batch index {index} out of range for a dataset of {len(self)} batches.")
        return self._load_batch(self._order, index)

    def _elements(self):
        order = self._next_order()
        count = self._cardinality()

        def load_all():
            return parallel_map(range(count), lambda index: self._load_batch(order, index), map_threads(AUTOTUNE))

        return prefetched(load_all, prefetch_buffer(AUTOTUNE))

    def batch(self, batch_size, drop_remainder=False, num_parallel_calls=None, deterministic=None, name=None):
        """Batches of ``batch_size`` (``tf.data.Dataset.batch``). Single
        samples are batched by loading several at once: a new FileDataset
        with the same order, this one unchanged."""
        if self.batch_size is not None or drop_remainder:
            return super().batch(batch_size, drop_remainder, num_parallel_calls, deterministic, name)
        batch_size = check_count("Dataset.batch batch_size", batch_size, 1)
        batched = FileDataset(self.samples, self._load, self.labels, batch_size=batch_size, shuffle=self._shuffle,
                              class_names=self.class_names, file_paths=self.file_paths)
        batched._rng, batched._order = self._rng, self._order.copy()
        return batched
