"""What the ``*_dataset_from_directory`` loaders share: indexing a folder of
class subfolders, the training/validation split, label encodings, and the
batch source they return.

Indexing, shuffling and splitting follow Keras's ``dataset_utils`` step for
step (sorted walk, one ``RandomState(seed)`` shuffle of the paths and the
same of the labels, the validation subset taken from the end), so the same
``seed`` puts the same files in the same subset as Keras does. Where Keras
returns a ``tf.data.Dataset``, minikeras returns a ``FileDataset``
(`minikeras.utils.file_dataset`): a ``minikeras.data.Dataset`` with
tf.data's methods, ``class_names`` and ``file_paths``, loading its batches
in background threads.
"""
import os

import numpy

from minikeras._support import io_utils
from minikeras.utils.file_dataset import FileDataset  # noqa: F401  (the loaders' dataset, imported from here)


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
