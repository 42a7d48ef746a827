"""``utils.split_dataset`` and ``utils.normalize``."""
import numbers
import random

import numpy

from minikeras.data.dataset import Dataset
from minikeras.data.elements import stack_elements
from minikeras.data.transforms import BatchDataset
from minikeras._support import nest
from minikeras.utils.dataset_utils import FileDataset


def _split_sizes(left_size, right_size, total):
    """Keras's rules for ``left_size``/``right_size`` (fractions or counts)
    -> two sample counts."""
    for name, size in (("left_size", left_size), ("right_size", right_size)):
        if size is not None and type(size) not in (int, float):
            raise TypeError(f"Invalid `{name}` Type. Expected: int or float or None, Received: "
                            f"type({name})={type(size)}.")
    if left_size is None and right_size is None:
        raise ValueError("At least one of the `left_size` or `right_size` must be specified. Received: "
                         "left_size=None and right_size=None")
    if left_size == 0 and right_size == 0:
        raise ValueError("Both `left_size` and `right_size` are zero. At least one of the split sizes must be "
                         "non-zero.")
    for name, size in (("left_size", left_size), ("right_size", right_size)):
        if (type(size) is int and (size <= 0 or size >= total)) or (type(size) is float and not 0 < size < 1):
            raise ValueError(f"`{name}` should be either a positive integer smaller than {total}, or a float within "
                             f"the range `[0, 1]`. Received: {name}={size}")
    if type(left_size) is float and type(right_size) is float and left_size + right_size > 1:
        raise ValueError("The sum of `left_size` and `right_size` is greater than 1. It must be less than or equal "
                         "to 1.")
    left = round(left_size * total) if type(left_size) is float else left_size
    right = round(right_size * total) if type(right_size) is float else right_size
    left = total - right if left is None else left
    right = total - left if right is None else right
    if left + right > total:
        raise ValueError(f"The sum of `left_size` and `right_size` should be smaller than the {total}. Received: "
                         f"left_size + right_size = {left + right}and total_length = {total}")
    for size, side in ((left, "left"), (right, "right")):
        if size == 0:
            raise ValueError(f"With `dataset` of length={total}, `left_size`={left} and `right_size`={right}. "
                             f"Resulting {side} side dataset split will be empty. Adjust any of the aforementioned "
                             "parameters")
    return int(left), int(right)


def _as_samples(dataset):
    """``(count, load, labels, batch_size)`` for an array, a tuple/list of
    arrays of one length, a FileDataset, or any iterable of samples."""
    if isinstance(dataset, FileDataset):
        samples = dataset.samples
        return len(samples), (lambda rows: dataset._load([samples[row] for row in rows])), dataset.labels, \
            dataset.batch_size
    if isinstance(dataset, numpy.ndarray) or hasattr(dataset, "__array__"):
        array = numpy.asarray(dataset)
        return len(array), (lambda rows: array[numpy.asarray(rows)]), None, None
    if isinstance(dataset, (list, tuple)) and dataset and all(hasattr(part, "__len__") and
                                                              not isinstance(part, (str, numbers.Number))
                                                              for part in dataset):
        arrays = [numpy.asarray(part) for part in dataset]
        lengths = {len(array) for array in arrays}
        if len(lengths) == 1 and not (isinstance(dataset, list) and all(array.ndim == 0 for array in arrays)):
            return lengths.pop(), (lambda rows: tuple(array[numpy.asarray(rows)] for array in arrays)), None, None
        raise ValueError(f"split_dataset: the arrays of the dataset must have the same length, received lengths "
                         f"{sorted(lengths)}.")
    if isinstance(dataset, Dataset):
        # Keras reads a tf.data dataset sample by sample (a batched one unbatched, its splits batched
        # again with its batch size) and slices the samples.
        batch_size = None
        if isinstance(dataset, BatchDataset):
            batch_size, dataset = dataset._batch_size, dataset.unbatch()
        elements = list(dataset.as_numpy_iterator())
        if not elements:
            raise ValueError("split_dataset: the dataset is empty.")
        stacked = stack_elements(elements)
        return len(elements), (lambda rows: nest.map_structure(lambda leaf: leaf[numpy.asarray(rows)], stacked)), \
            None, batch_size
    if hasattr(dataset, "__iter__"):
        elements = list(dataset)
        array = numpy.asarray(elements)
        return len(array), (lambda rows: array[numpy.asarray(rows)]), None, None
    raise TypeError(f"The `dataset` argument must be either a FileDataset, an array or a list/tuple of arrays. "
                    f"Received: dataset={dataset!r} of type {type(dataset)}")


def split_dataset(dataset, left_size=None, right_size=None, shuffle=False, seed=None, preferred_backend=None):
    """Split a dataset in two, as Keras's ``split_dataset``.

    Args:
        dataset: an array, a tuple/list of arrays of one length (``(x, y)``),
            a dataset from the directory loaders, a ``minikeras.data.Dataset``
            (a batched one is split by sample and its parts batched again, as
            Keras does), or
            an iterable of samples.
        left_size, right_size: a fraction (float in (0, 1)) or a count (int);
            a missing one is the rest.
        shuffle: shuffle the samples first (Python's ``random`` with
            ``seed``, so the same seed splits the same samples as Keras).
        seed: the shuffle's seed.
        preferred_backend: accepted for Keras compatibility (ignored).

    Returns:
        ``(left, right)`` datasets of single samples (``.batch(n)`` batches
        them); a loader's batched dataset keeps its batch size.
    """
    count, load, labels, batch_size = _as_samples(dataset)
    order = list(range(count))
    if shuffle:
        random.Random(random.randint(0, int(1e6)) if seed is None else seed).shuffle(order)
    left_count, right_count = _split_sizes(left_size, right_size, count)
    parts = []
    for rows in (order[:left_count], order[count - right_count:]):
        rows = numpy.asarray(rows)
        parts.append(FileDataset(rows, load, None if labels is None else labels[rows], batch_size=batch_size,
                                 class_names=getattr(dataset, "class_names", None)))
    return tuple(parts)


def normalize(x, axis=-1, order=2):
    """``x`` divided by its ``order``-norm along ``axis`` (zero norms left
    alone), as Keras's ``utils.normalize``."""
    if not isinstance(x, numpy.ndarray) and hasattr(x, "numpy"):
        from minikeras import ops

        norm = ops.sum(ops.abs(x) ** order, axis=axis, keepdims=True) ** (1.0 / order)
        return x / ops.where(norm == 0, ops.ones_like(norm), norm)
    x = numpy.asarray(x)
    norm = numpy.atleast_1d(numpy.linalg.norm(x, order, axis))
    norm[norm == 0] = 1
    return x / numpy.expand_dims(norm, -1 if axis is None else axis)
