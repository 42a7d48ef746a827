"""What the ``*_dataset_from_directory`` loaders share: indexing a folder of
class subfolders, the training/validation split, label encodings, and the
batch source they return.

Indexing, shuffling and splitting follow Keras's ``dataset_utils`` step for
step (sorted walk, one ``RandomState(seed)`` shuffle of the paths and the
same of the labels, the validation subset taken from the end), so the same
``seed`` puts the same files in the same subset as Keras does. Where Keras
returns a ``tf.data.Dataset``, minikeras returns a ``FileDataset``: a
PyDataset (``fit``, ``evaluate`` and ``predict`` take it as ``x``) with
``class_names`` and ``file_paths``, loading each batch when asked for it.
"""
import os

import numpy

from minikeras.utils import io_utils
from minikeras.utils.py_dataset import PyDataset


def check_validation_split_arg(validation_split, subset, shuffle, seed):
    """Keras's checks of ``validation_split``/``subset``/``seed`` (ValueError)."""
    if validation_split and not 0 < validation_split < 1:
        raise ValueError(f"`validation_split` must be between 0 and 1, received: {validation_split}")
    if (validation_split or subset) and not (validation_split and subset):
        raise ValueError("If `subset` is set, `validation_split` must be set, and inversely.")
    if subset not in ("training", "validation", "both", None):
        raise ValueError(f'`subset` must be either "training", "validation" or "both", received: {subset}')
    if validation_split and shuffle and seed is None:
        raise ValueError("If using `validation_split` and shuffling the data, you must provide a `seed` argument, to "
                         "make sure that there is no overlap between the training and validation subset.")


def _valid_files(directory, follow_links, formats):
    for root, _, files in sorted(os.walk(directory, followlinks=follow_links), key=lambda entry: entry[0]):
        for name in sorted(files):
            if name.lower().endswith(formats):
                yield os.path.join(root, name)


def index_directory(directory, labels, formats, class_names=None, shuffle=True, seed=None, follow_links=False,
                    verbose=True):
    """The files under ``directory`` with their labels, as Keras indexes them.

    Args:
        directory: the folder; with ``labels="inferred"`` its subfolders are
            the classes (sorted, or in ``class_names``'s order).
        labels: ``"inferred"``, None, or one integer label per file (files in
            sorted path order).
        formats: the accepted file extensions (lower case, with the dot).
        class_names: the classes to keep, in order (``labels="inferred"`` only).
        shuffle: shuffle the files (with ``seed``); otherwise sorted order.
        seed: the shuffle's seed.
        follow_links: walk into symlinked folders.
        verbose: print "Found N files belonging to M classes."

    Returns:
        ``(file_paths, labels, class_names)``: labels an int32 array (None
        when ``labels`` is None).
    """
    if not os.path.isdir(directory):
        raise ValueError(f"The directory {directory!r} does not exist or is not a directory.")
    if labels == "inferred":
        subdirs = [name for name in sorted(os.listdir(directory))
                   if os.path.isdir(os.path.join(directory, name)) and not name.startswith(".")]
        if class_names is not None:
            if not set(class_names).issubset(subdirs):
                raise ValueError("The `class_names` passed did not match the names of the subdirectories of the "
                                 f"target directory. Expected: {subdirs} (or a subset of it), but received: "
                                 f"class_names={class_names}")
            subdirs = list(class_names)
    else:
        subdirs = [""]
        if class_names is not None:
            if labels is None:
                raise ValueError("When `labels=None` (no labels), argument `class_names` cannot be specified.")
            raise ValueError("When argument `labels` is specified, argument `class_names` cannot be specified (the "
                             "`class_names` will be the sorted list of labels).")
    file_paths, inferred = [], []
    for index, subdir in enumerate(subdirs):
        found = list(_valid_files(os.path.join(directory, subdir), follow_links, formats))
        file_paths += found
        inferred += [index] * len(found)
    if labels == "inferred":
        labels, class_names = numpy.asarray(inferred, dtype="int32"), subdirs
    elif labels is None:
        class_names = None
    else:
        if len(labels) != len(file_paths):
            raise ValueError(f"Expected the lengths of `labels` to match the number of files in the target "
                             f"directory. len(labels) is {len(labels)} while we found {len(file_paths)} files in "
                             f"directory {directory}.")
        class_names = [str(label) for label in sorted(set(labels))]
        labels = numpy.asarray(labels, dtype="int32")
    if verbose:
        io_utils.print_msg(f"Found {len(file_paths)} files." if labels is None else
                           f"Found {len(file_paths)} files belonging to {len(class_names)} classes.")
    if shuffle:
        seed = numpy.random.randint(1e6) if seed is None else seed
        numpy.random.RandomState(seed).shuffle(file_paths)
        if labels is not None:
            numpy.random.RandomState(seed).shuffle(labels)
    return file_paths, labels, class_names


def get_training_or_validation_split(samples, labels, validation_split, subset):
    """``samples``/``labels`` restricted to ``subset`` (the validation part is
    the last ``int(validation_split * n)``), as Keras splits them."""
    if not validation_split:
        return samples, labels
    validation_count = int(validation_split * len(samples))
    training_count = len(samples) - validation_count
    if subset == "training":
        io_utils.print_msg(f"Using {training_count} files for training.")
        part = slice(0, training_count)
    elif subset == "validation":
        io_utils.print_msg(f"Using {validation_count} files for validation.")
        part = slice(training_count, len(samples))
    else:
        raise ValueError(f'`subset` must be either "training" or "validation", received: {subset}')
    return samples[part], None if labels is None else labels[part]


def encode_labels(labels, label_mode, num_classes):
    """Integer labels as Keras's ``label_mode`` gives them: ``"int"`` int32,
    ``"binary"`` float32 of shape ``(n, 1)``, ``"categorical"`` one-hot float32."""
    labels = numpy.asarray(labels, dtype="int32")
    if label_mode == "binary":
        return labels.astype("float32")[:, None]
    if label_mode == "categorical":
        return numpy.eye(num_classes, dtype="float32")[labels]
    return labels


def check_label_mode(labels, label_mode, class_names):
    """Keras's checks of ``labels``/``label_mode``/``class_names``; returns
    ``(labels, label_mode)`` with both None when either is."""
    if labels not in ("inferred", None):
        if not isinstance(labels, (list, tuple, numpy.ndarray)):
            raise ValueError("`labels` argument should be a list/tuple of integer labels, of the same size as the "
                             "number of files in the target directory. If you wish to infer the labels from the "
                             'subdirectory names in the target directory, pass `labels="inferred"`. If you wish to '
                             f"get a dataset that only contains the data (no labels), pass `labels=None`. Received: "
                             f"labels={labels}")
        if class_names:
            raise ValueError(f'You can only pass `class_names` if `labels="inferred"`. Received: labels={labels}, and '
                             f"class_names={class_names}")
    if label_mode not in {"int", "categorical", "binary", None}:
        raise ValueError(f'`label_mode` argument must be one of "int", "categorical", "binary", or None. Received: '
                         f"label_mode={label_mode}")
    if labels is None or label_mode is None:
        return None, None
    return labels, label_mode


class FileDataset(PyDataset):
    """Batches of samples loaded on demand: what the directory loaders return.

    ``fit``/``evaluate``/``predict`` take it as ``x``; iterating it gives the
    batches, ``(x, y)`` or ``x`` alone when there are no labels.

    Args:
        samples: what ``load`` reads (file paths, or rows of an array).
        load: ``load(samples_of_a_batch) -> x`` (a stacked batch array, or
            any batch structure).
        labels: encoded labels (one row per sample) or None.
        batch_size: samples per batch; None gives single samples (no batch axis).
        shuffle: reshuffle the order at the start of every epoch.
        seed: the reshuffling's seed (None: fresh entropy).
        class_names, file_paths: Keras's attributes of the returned dataset.
    """

    def __init__(self, samples, load, labels=None, batch_size=32, shuffle=False, seed=None, class_names=None,
                 file_paths=None):
        super().__init__()
        if batch_size is not None and (isinstance(batch_size, bool) or not isinstance(batch_size, int)
                                       or batch_size < 1):
            raise ValueError(f"batch_size must be a positive int or None, received {batch_size!r}.")
        self.samples = samples
        self.labels = labels
        self.batch_size = batch_size
        self.shuffle = shuffle
        self.class_names = class_names
        self.file_paths = file_paths
        self._load = load
        self._rng = numpy.random.default_rng(seed)
        self._order = numpy.arange(len(samples))
        if shuffle:
            self._rng.shuffle(self._order)
        self._epoch_started = False

    def __len__(self):
        if self.batch_size is None:
            return len(self._order)
        return -(-len(self._order) // self.batch_size)

    @property
    def cardinality(self):
        """Batches per epoch (tf.data's name)."""
        return len(self)

    def on_epoch_begin(self):
        # The first epoch uses the order drawn at construction; later ones reshuffle (tf.data's
        # reshuffle_each_iteration).
        if self.shuffle and self._epoch_started:
            self._rng.shuffle(self._order)
        self._epoch_started = True

    def __getitem__(self, index):
        if not 0 <= index < len(self):
            raise IndexError(f"batch index {index} out of range for a dataset of {len(self)} batches.")
        if self.batch_size is None:
            rows = self._order[index:index + 1]
        else:
            rows = self._order[index * self.batch_size:(index + 1) * self.batch_size]
        x = self._load([self.samples[row] for row in rows])
        if self.batch_size is None:
            x = x[0] if not isinstance(x, (tuple, list)) else type(x)(part[0] for part in x)
        if self.labels is None:
            return x
        y = self.labels[rows]
        return x, (y[0] if self.batch_size is None else y)

    def __iter__(self):
        self.on_epoch_begin()
        for index in range(len(self)):
            yield self[index]

    def batch(self, batch_size):
        """The same samples in batches of ``batch_size`` (as
        ``tf.data.Dataset.batch``): a new dataset, this one unchanged."""
        batched = FileDataset(self.samples, self._load, self.labels, batch_size=batch_size, shuffle=self.shuffle,
                              class_names=self.class_names, file_paths=self.file_paths)
        batched._rng, batched._order = self._rng, self._order.copy()
        return batched

    def take(self, count):
        """The first ``count`` batches (as ``tf.data.Dataset.take`` is used to peek)."""
        return [self[index] for index in range(min(count, len(self)))]


def datasets_for_subset(paths, labels, class_names, label_mode, validation_split, subset, load, batch_size, shuffle,
                        seed, empty_message):
    """The loaders' last step: the ``FileDataset`` of ``subset`` (a
    ``[training, validation]`` pair for ``"both"``, the validation part
    never shuffled), refusing an empty part with ``empty_message(what)``."""

    def make(part_paths, part_labels, part_shuffle, what=""):
        if not len(part_paths):
            raise ValueError(empty_message(what))
        encoded = None if part_labels is None else encode_labels(part_labels, label_mode, len(class_names))
        return FileDataset(part_paths, load, encoded, batch_size=batch_size, shuffle=part_shuffle, seed=seed,
                           class_names=class_names, file_paths=part_paths)

    if subset == "both":
        train = get_training_or_validation_split(paths, labels, validation_split, "training")
        validation = get_training_or_validation_split(paths, labels, validation_split, "validation")
        return [make(*train, shuffle, "training "), make(*validation, False, "validation ")]
    paths, labels = get_training_or_validation_split(paths, labels, validation_split, subset)
    return make(paths, labels, shuffle)
