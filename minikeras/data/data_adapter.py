"""Turning fit/evaluate/predict inputs into batches.

Accepted, as Keras 3 accepts them:

- arrays: NumPy (or CuPy) arrays, minikeras Tensors (batched on the device
  where they live), anything array-like (torch/TF/JAX tensors, pandas
  DataFrames and Series: `minikeras._support.array_like`), nested Python lists
  of numbers or strings, and lists/tuples/dicts of those for several
  inputs/outputs;
- a Sequence-like object (``__len__`` and ``__getitem__`` giving batches,
  e.g. a PyDataset);
- a generator/iterator, or an iterable of batches such as a
  ``minikeras.data.Dataset`` (what the data utilities return), a
  ``tf.data.Dataset`` or a ``torch.utils.data.DataLoader`` (recognised by
  the iteration protocol, never imported), yielding ``x``, ``(x, y)`` or
  ``(x, y, sample_weight)`` (a list is read as a tuple, as Keras does).
  An iterable that makes a fresh iterator per ``iter()`` call is read
  from its start every epoch; with ``steps_per_epoch`` it is read on
  across epochs and restarted when it runs out, as Keras's epoch iterator
  does.
"""
import warnings

import numpy

from minikeras.backend import run_limits
from minikeras.data.dataset import Dataset
from minikeras.device import registry
from minikeras._support.argument_validation import is_int
from minikeras._support import array_like
from minikeras.data import py_dataset
from minikeras._support.nest import flatten as _flatten
from minikeras._support.nest import map_structure as _map
from minikeras._support.packing import unpack_x_y_sample_weight


def _as_array(value):
    if value is None:
        return None
    array = array_like.to_array(value, "Model data")
    if array.dtype.kind not in "biufc" and not array_like.is_string_array(array):
        # objects (None would train as NaN), dates, structured records
        raise TypeError(f"Model data must be numeric arrays; received an array of dtype {array.dtype} from "
                        f"{type(value).__name__}. (Text is taken as arrays of str or bytes, for TextVectorization.)")
    if array.dtype.kind == "c":
        # A layer casts its inputs to its real compute dtype: the imaginary part would be dropped unseen.
        raise TypeError(f"Model data must be real numbers; received a complex array of dtype {array.dtype} from "
                        f"{type(value).__name__}. Pass the real and imaginary parts as separate features, "
                        "e.g. minikeras.ops.view_as_real(x).")
    if array.ndim == 0:
        raise ValueError(f"Model data must be arrays with a batch axis (one row per sample); received a single "
                         f"{type(value).__name__} {str(value)[:60]!r}.")
    return array


def as_arrays(structure):
    """Every leaf of an x/y/sample_weight structure as an array.

    A list that is itself one array written as nested Python lists (its
    first elements lead to a number or a string) becomes one array; other
    lists, tuples and dicts are structures of several inputs or outputs.
    """
    if isinstance(structure, (list, tuple)):
        if array_like.is_nested_numbers(structure):
            return _as_array(structure)
        return type(structure)(as_arrays(item) for item in structure)
    if isinstance(structure, dict):
        return {key: as_arrays(value) for key, value in structure.items()}
    return _as_array(structure)


def is_batch_source(x):
    """True for generators, iterables of batches (tf.data, DataLoader) and
    Sequence-like objects; False for arrays, Tensors and array-likes."""
    if isinstance(x, (numpy.ndarray, list, tuple, dict, str, bytes, set, frozenset)) or array_like.is_array_like(x):
        return False
    if hasattr(x, "__getitem__") and hasattr(x, "__len__"):
        return True
    return hasattr(x, "__next__") or hasattr(x, "__iter__")


def _rows(array, rows):
    """``array[rows]``, on the device that holds the array (Tensors' data)."""
    device = None if isinstance(array, numpy.ndarray) else registry.owner_of(array)
    if device is None:
        return array[rows]
    with device.activate():
        return array[rows]


class ArrayData:
    """In-memory arrays, split into (optionally shuffled) batches."""

    def __init__(self, x, y=None, sample_weight=None, batch_size=32, shuffle=False, steps=None):
        self.x = as_arrays(x)
        self.y = None if y is None else as_arrays(y)
        self.sample_weight = None if sample_weight is None else as_arrays(sample_weight)
        sizes = {len(a) for a in _flatten(self.x)}
        if len(sizes) != 1:
            raise ValueError(f"All input arrays must have the same number of samples, received sizes {sorted(sizes)}.")
        self.size = sizes.pop()
        if self.y is not None:
            y_sizes = {len(a) for a in _flatten(self.y)}
            if y_sizes != {self.size}:
                raise ValueError(
                    f"x and y must have the same number of samples: x has {self.size}, y has {sorted(y_sizes)}."
                )
        if self.sample_weight is not None:
            w_sizes = {len(a) for a in _flatten(self.sample_weight)}
            if w_sizes != {self.size}:
                raise ValueError(
                    f"sample_weight must have one value per sample ({self.size}), received sizes {sorted(w_sizes)}."
                )
        if not is_int(batch_size) or batch_size <= 0:
            raise ValueError(f"batch_size must be a positive int, received {batch_size!r}.")
        self.batch_size = int(batch_size)
        self.shuffle = shuffle
        full = -(-self.size // self.batch_size)
        self.steps = full if steps is None else min(int(steps), full)

    def split(self, fraction):
        """Keras's validation_split: the last ``fraction`` of the samples."""
        if not 0 < fraction < 1:
            raise ValueError(f"validation_split must be in (0, 1), received {fraction!r}.")
        cut = int(self.size * (1 - fraction))
        if cut == 0 or cut == self.size:
            raise ValueError(f"validation_split={fraction} leaves no samples on one side ({self.size} samples).")

        def head(a):
            return _rows(a, slice(None, cut))

        def tail(a):
            return _rows(a, slice(cut, None))

        train = (_map(head, self.x), None if self.y is None else _map(head, self.y),
                 None if self.sample_weight is None else _map(head, self.sample_weight))
        valid = (_map(tail, self.x), None if self.y is None else _map(tail, self.y),
                 None if self.sample_weight is None else _map(tail, self.sample_weight))
        return train, valid

    def batches(self, rng=None):
        """Yield ``(x, y, sample_weight)`` per batch."""
        order = None
        if self.shuffle and self.size > 1:
            order = (rng or numpy.random.default_rng()).permutation(self.size)
        on_device = {}  # the order uploaded once per epoch to each device holding data

        def take_rows(a, start, stop):
            device = None if isinstance(a, numpy.ndarray) else registry.owner_of(a)
            if device is None:
                return a[start:stop] if order is None else a[order[start:stop]]
            # Data already on a device is batched there: no host round trip.
            with device.activate():
                if order is None:
                    return a[start:stop]
                if device not in on_device:
                    on_device[device] = device.asarray(order)
                return a[on_device[device][start:stop]]

        for step in range(self.steps):
            start = step * self.batch_size
            stop = min(start + self.batch_size, self.size)

            # Bind this step's bounds only: a wrapper that closed over the previous
            # step's wrapper nested one call deeper per step (RecursionError at ~1,000).
            def take(a, start=start, stop=stop):
                return take_rows(a, start, stop)

            yield (_map(take, self.x), None if self.y is None else _map(take, self.y),
                   None if self.sample_weight is None else _map(take, self.sample_weight))


class SourceData:
    """Batches from a PyDataset/Sequence-like object, a generator, or an
    iterable of batches (tf.data.Dataset, DataLoader).

    A PyDataset is read with its ``workers`` (see `minikeras.data.py_dataset`),
    and its ``on_epoch_begin``/``on_epoch_end`` hooks are called around each
    epoch. A generator is read until ``steps`` batches or until it runs out;
    running out early warns as Keras does and sets ``ran_out``, which tells
    ``fit`` to stop after this epoch (and to log no epoch that saw no batch).
    An iterable whose ``iter()`` gives a fresh iterator (tf.data, DataLoader)
    starts again each epoch instead: without ``steps`` an epoch is one pass;
    with ``steps`` the pass goes on across epochs and restarts when it ends
    (an epoch cut short by the end warns, as Keras's epoch iterator does).
    Each batch's arrays are converted at the boundary (`as_arrays`).
    """

    def __init__(self, source, steps=None):
        self.source = source
        # A minikeras Dataset is read as tf.data is (a new pass per epoch), even where it also has
        # random access (the loaders' FileDataset).
        self.is_sequence = hasattr(source, "__getitem__") and hasattr(source, "__len__") and \
            not isinstance(source, Dataset)
        self.ran_out = False
        self.batches_seen = 0
        self._iterator = None
        self._user_steps = steps is not None
        if self.is_sequence:
            available = py_dataset.num_batches(source)
            if available is None and steps is None:
                raise ValueError(f"{type(source).__name__} has no length (an endless PyDataset): "
                                 "give fit/evaluate/predict the number of steps per epoch.")
            self.steps = available if steps is None else int(steps) if available is None \
                else min(int(steps), available)
            self.reiterable = False
        else:
            self.steps = steps
            # An iterator (a generator) is read once; an iterable without
            # __next__ (tf.data, DataLoader) gives a new pass per iter(),
            # started only when an epoch needs it (a DataLoader's iter()
            # starts its workers).
            self.reiterable = not hasattr(source, "__next__")
            if not self.reiterable:
                self._iterator = iter(source)
            elif steps is None:
                self.steps = _known_length(source)  # for the progress bar; None when unknown

    def batches(self, rng=None):
        self.batches_seen = 0
        if self.is_sequence:
            if hasattr(self.source, "on_epoch_begin"):
                self.source.on_epoch_begin()
            for batch in py_dataset.iterate_batches(self.source, self.steps):
                self.batches_seen += 1
                yield self._unpacked(batch)
            if hasattr(self.source, "on_epoch_end"):
                self.source.on_epoch_end()
            return
        if self.reiterable:
            yield from self._pass_batches()
            return
        while self.steps is None or self.batches_seen < self.steps:
            try:
                batch = next(self._iterator)
            except StopIteration:
                if self.batches_seen == 0 or self.steps is not None:
                    self._warn_ran_out()
                return
            self.batches_seen += 1
            yield self._unpacked(batch)

    def _pass_batches(self):
        """One epoch from a re-iterable source (class docstring)."""
        fresh = self._iterator is None or not self._user_steps
        if fresh:
            self._iterator = iter(self.source)
        while self.steps is None or self.batches_seen < self.steps:
            try:
                batch = next(self._iterator)
            except StopIteration:
                self._iterator = None  # the next epoch starts a new pass
                if self.batches_seen == 0 and fresh:
                    self._warn_ran_out()  # an empty source
                elif self.batches_seen == 0:
                    yield from self._pass_batches()  # the previous epoch ended exactly at the end
                elif self._user_steps:
                    warnings.warn(f"Your input ran out of data after {self.batches_seen} of the {self.steps} "
                                  "batches asked for this epoch; it starts again next epoch. Repeat the dataset "
                                  "(e.g. dataset.repeat()) to fill every epoch.", stacklevel=4)
                return
            self.batches_seen += 1
            yield self._unpacked(batch)

    def _unpacked(self, batch):
        """The batch just counted as ``(x, y, sample_weight)`` arrays. An empty
        one is refused here: it has no loss to take a gradient of, nor
        predictions to keep, and would fail deep inside the step."""
        x, y, sample_weight = unpack(batch)
        first = next(iter(_flatten(x)), None)
        if first is not None and first.shape[0] == 0:
            raise ValueError(f"Batch {self.batches_seen - 1} of the {type(self.source).__name__} holds no samples (x "
                             f"has shape {tuple(first.shape)}): every batch needs at least one. Skip empty batches "
                             "where they are made (e.g. a last batch of 0 samples).")
        return x, y, sample_weight

    def _warn_ran_out(self):
        self.ran_out = True
        wanted = "" if self.steps is None else f" ({self.steps} batches per epoch were asked for)"
        warnings.warn(
            "Your input ran out of data; interrupting training. Make sure that your generator can produce "
            f"at least `steps_per_epoch * epochs` batches{wanted}: for example loop over the data forever "
            "inside the generator, or pass a PyDataset, which starts again every epoch.", stacklevel=4)


def _known_length(source):
    """``len(source)`` when the iterable knows it (a DataLoader, a finite
    tf.data.Dataset), else None (TypeError for an endless tf.data)."""
    try:
        length = len(source)
    except Exception:  # no __len__, or a dataset of unknown or infinite cardinality
        return None
    return int(length) if is_int(length) and length >= 0 else None


def unpack(batch):
    """A batch -> ``(x, y, sample_weight)`` of arrays: ``x``, ``(x,)``,
    ``(x, y)`` or ``(x, y, sample_weight)``; a list is read as a tuple (a
    DataLoader's batches are lists), as Keras does."""
    x, y, sample_weight = unpack_x_y_sample_weight(batch)
    return (as_arrays(x), None if y is None else as_arrays(y),
            None if sample_weight is None else as_arrays(sample_weight))


def _capped_steps(steps):
    """``steps`` under ``config.set_max_steps_per_epoch``'s cap (with Keras's warning)."""
    cap = run_limits.max_steps_per_epoch()
    if cap and (not steps or cap < steps):
        warnings.warn(f"Limiting steps_per_epoch to {cap}", stacklevel=3)
        return cap
    return steps


def make_data(x, y=None, sample_weight=None, batch_size=None, shuffle=False, steps=None):
    """An ArrayData or SourceData for the inputs of fit/evaluate/predict."""
    if x is None:
        raise ValueError("No input data: x is None.")
    steps = _capped_steps(steps)
    if is_batch_source(x):
        if y is not None:
            raise ValueError("When x is a dataset, a generator or a PyDataset, y must be None (its batches carry the "
                             "targets: (x, y) or (x, y, sample_weight)).")
        return SourceData(x, steps)
    return ArrayData(x, y, sample_weight, 32 if batch_size is None else batch_size, shuffle, steps)
