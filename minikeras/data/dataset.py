"""``Dataset``: an input pipeline with tf.data's methods and semantics.

What the data utilities return (``image_dataset_from_directory``,
``timeseries_dataset_from_array``, ``split_dataset``, ...) is a Dataset, so
the keras.io habits work as written::

    train_ds = mk.utils.image_dataset_from_directory("photos", image_size=(180, 180), batch_size=32)
    train_ds = train_ds.map(lambda x, y: (augment(x), y), num_parallel_calls=mk.data.AUTOTUNE)
    model.fit(train_ds.prefetch(mk.data.AUTOTUNE), epochs=25)

Each transformation returns a new Dataset and leaves its input unchanged.
Iterating a Dataset (``for batch in ds``, or ``fit``/``evaluate``/
``predict``, which take it as ``x``) makes one pass: ``shuffle`` draws a new
order on every pass (``reshuffle_each_iteration``), ``cache`` fills on the
first complete pass and replays after. Elements are host data (see
`minikeras.data.elements`); ``map``'s and ``filter``'s functions run on the
CPU without recording gradients, and ``prefetch`` (and the loaders
themselves) produce elements in a background thread, a bounded number
ahead.
"""
import numpy

from minikeras.data import elements
from minikeras.data.threads import AUTOTUNE

INFINITE_CARDINALITY = -1
UNKNOWN_CARDINALITY = -2


class Cardinality(int):
    """A dataset's element count (an int; ``INFINITE_CARDINALITY``,
    ``UNKNOWN_CARDINALITY``), with tf's ``.numpy()`` for code that reads
    ``ds.cardinality().numpy()``."""

    def numpy(self):
        return numpy.int64(self)


def _check_callable(what, function):
    if not callable(function):
        raise TypeError(f"{what} expects a callable, received {type(function).__name__} {function!r:.60}.")


def _check_parallel_calls(what, value):
    if value is None or value == AUTOTUNE and not isinstance(value, bool):
        return value
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{what} expects num_parallel_calls to be None, AUTOTUNE or a positive int, received "
                         f"{value!r}.")
    return value


class Dataset:
    """A sequence of elements, transformed lazily (tf.data's ``Dataset``).

    Subclasses implement ``_elements()`` (a generator over one pass) and
    ``_cardinality()``. The transformations below are tf.data's, with its
    arguments; ``name`` arguments are accepted and ignored.
    """

    def _elements(self):
        raise NotImplementedError(f"{type(self).__name__} must implement _elements().")

    def _cardinality(self):
        return UNKNOWN_CARDINALITY

    # ------------------------------------------------------------ iteration
    def __iter__(self):
        return elements.yielded(self._elements())

    def as_numpy_iterator(self):
        """An iterator over the elements as NumPy arrays (text as bytes)."""
        return (elements.to_numpy_element(element) for element in elements.yielded(self._elements()))

    def cardinality(self):
        """The number of elements: an int, or ``INFINITE_CARDINALITY`` (-1,
        after ``repeat()``) or ``UNKNOWN_CARDINALITY`` (-2, after ``filter``)."""
        return Cardinality(self._cardinality())

    def __len__(self):
        count = self._cardinality()
        if count == INFINITE_CARDINALITY:
            raise TypeError("The dataset is infinite.")
        if count == UNKNOWN_CARDINALITY:
            raise TypeError("The dataset length is unknown.")
        return count

    def __bool__(self):
        return True  # not len(): an infinite dataset is still a dataset

    def __repr__(self):
        return f"<{type(self).__name__.lstrip('_')} cardinality={self._cardinality()}>"

    # ------------------------------------------------------- transformations
    def map(self, map_func, num_parallel_calls=None, deterministic=None, synchronous=None,
            use_unbounded_threadpool=False, name=None):
        """Each element replaced by ``map_func(element)`` (a tuple element
        is passed as separate arguments). With ``num_parallel_calls``
        (an int or ``AUTOTUNE``) several elements are mapped at once in
        threads, still in order."""
        from minikeras.data.transforms import MapDataset

        _check_callable("Dataset.map", map_func)
        return MapDataset(self, map_func, _check_parallel_calls("Dataset.map", num_parallel_calls))

    def filter(self, predicate, name=None):
        """The elements for which ``predicate(element)`` is true (a scalar bool)."""
        from minikeras.data.transforms import FilterDataset

        _check_callable("Dataset.filter", predicate)
        return FilterDataset(self, predicate)

    def batch(self, batch_size, drop_remainder=False, num_parallel_calls=None, deterministic=None, name=None):
        """Consecutive elements stacked into batches of ``batch_size`` (the
        last one smaller unless ``drop_remainder``)."""
        from minikeras.data.transforms import BatchDataset

        _check_parallel_calls("Dataset.batch", num_parallel_calls)
        return BatchDataset(self, elements.check_count("Dataset.batch batch_size", batch_size, 1),
                            bool(drop_remainder))

    def unbatch(self, name=None):
        """Each batch split back into its elements."""
        from minikeras.data.transforms import UnbatchDataset

        return UnbatchDataset(self)

    def shuffle(self, buffer_size, seed=None, reshuffle_each_iteration=None, name=None):
        """The elements in random order, drawn from a buffer of
        ``buffer_size`` (``buffer_size`` >= the dataset's size: a uniform
        shuffle). A new order on every pass unless
        ``reshuffle_each_iteration=False``; ``seed`` fixes the orders."""
        from minikeras.data.transforms import ShuffleDataset

        buffer_size = elements.check_count("Dataset.shuffle buffer_size", buffer_size, 1)
        reshuffle = True if reshuffle_each_iteration is None else bool(reshuffle_each_iteration)
        return ShuffleDataset(self, buffer_size, seed, reshuffle)

    def cache(self, filename="", name=None):
        """The elements kept after the first complete pass and replayed
        after it (in memory; with a ``filename``, also in that file, which a
        later run reads instead of the source)."""
        from minikeras.data.transforms import CacheDataset

        return CacheDataset(self, str(filename) if filename else "")

    def prefetch(self, buffer_size, name=None):
        """The elements produced ahead in a background thread, at most
        ``buffer_size`` waiting (``AUTOTUNE``: a small fixed bound)."""
        from minikeras.data.transforms import PrefetchDataset

        if buffer_size != AUTOTUNE or isinstance(buffer_size, bool):
            buffer_size = elements.check_count("Dataset.prefetch buffer_size", buffer_size, 0)
        return PrefetchDataset(self, buffer_size)

    def take(self, count, name=None):
        """The first ``count`` elements (-1: all)."""
        from minikeras.data.transforms import TakeDataset

        return TakeDataset(self, elements.check_count("Dataset.take count", count))

    def skip(self, count, name=None):
        """All but the first ``count`` elements (-1: none)."""
        from minikeras.data.transforms import SkipDataset

        return SkipDataset(self, elements.check_count("Dataset.skip count", count))

    def repeat(self, count=None, name=None):
        """The elements ``count`` times over (None or -1: forever), each
        pass a new iteration (reshuffled)."""
        from minikeras.data.transforms import RepeatDataset

        count = -1 if count is None else elements.check_count("Dataset.repeat count", count)
        return RepeatDataset(self, count)

    def concatenate(self, dataset, name=None):
        """This dataset's elements, then ``dataset``'s."""
        from minikeras.data.transforms import ConcatenateDataset

        if not isinstance(dataset, Dataset):
            raise TypeError(f"Dataset.concatenate expects a Dataset, received {type(dataset).__name__}.")
        return ConcatenateDataset(self, dataset)

    def apply(self, transformation_func):
        """``transformation_func(self)``."""
        _check_callable("Dataset.apply", transformation_func)
        return transformation_func(self)

    # ---------------------------------------------------------- constructors
    @staticmethod
    def from_tensor_slices(tensors, name=None):
        """One element per row of ``tensors``: an array (or list, as tf
        reads it), or a tuple/dict of arrays with the same first axis."""
        from minikeras.data.transforms import TensorSlicesDataset

        return TensorSlicesDataset(tensors)

    @staticmethod
    def range(*args, **kwargs):
        """``range(start, stop, step)`` as int64 scalars."""
        from minikeras.data.transforms import TensorSlicesDataset

        dtype = kwargs.pop("output_type", kwargs.pop("dtype", "int64"))
        kwargs.pop("name", None)
        if kwargs:
            raise TypeError(f"Dataset.range got unexpected keyword argument(s): {sorted(kwargs)}.")
        return TensorSlicesDataset(numpy.arange(*args, dtype=dtype))

    @staticmethod
    def zip(*datasets, name=None):
        """Elements of several datasets side by side (a tuple, or a dict of
        datasets), stopping at the shortest."""
        from minikeras.data.transforms import ZipDataset

        structure = datasets[0] if len(datasets) == 1 and isinstance(datasets[0], (tuple, list, dict)) \
            else datasets
        return ZipDataset(structure)
