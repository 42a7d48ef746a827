"""``text_dataset_from_directory``: a folder of class subfolders of ``.txt``
files as batches of strings (and labels), with Keras's arguments and errors.

Each batch's ``x`` is a NumPy array of Python strings (Keras gives a string
tensor), ready for ``layers.TextVectorization``; files are read as UTF-8
when their batch is asked for.
"""
import numpy

from minikeras.utils import dataset_utils


def _text_loader(max_length):
    def load(paths):
        texts = []
        for path in paths:
            with open(path, "rb") as handle:
                text = handle.read().decode("utf-8", errors="replace")
            texts.append(text if max_length is None else text[:max_length])
        return numpy.asarray(texts, dtype=object)

    return load


def text_dataset_from_directory(directory, labels="inferred", label_mode="int", class_names=None, batch_size=32,
                                max_length=None, shuffle=True, seed=None, validation_split=None, subset=None,
                                follow_links=False, format="tf", verbose=True):  # noqa: A002
    """Batches of texts (and labels) from the ``.txt`` files of a directory.

    Args:
        directory: the folder; with ``labels="inferred"`` its subfolders are
            the classes.
        labels, label_mode, class_names, batch_size, shuffle, seed,
        validation_split, subset, follow_links, verbose: as in
            ``image_dataset_from_directory``.
        max_length: keep at most this many characters of each text.
        format: ``"tf"`` (the default) gives minikeras's batch source.

    Returns:
        A ``FileDataset`` with ``class_names`` and ``file_paths`` (a pair with
        ``subset="both"``).
    """
    labels, label_mode = dataset_utils.check_label_mode(labels, label_mode, class_names)
    if format != "tf":
        raise ValueError(f'`format` should be "tf" ("grain" is not supported). Received: format={format}')
    dataset_utils.check_validation_split_arg(validation_split, subset, shuffle, seed)
    if seed is None:
        seed = numpy.random.randint(1e6)
    paths, labels, class_names = dataset_utils.index_directory(
        directory, labels, formats=(".txt",), class_names=class_names, shuffle=shuffle, seed=seed,
        follow_links=follow_links, verbose=verbose)
    if label_mode == "binary" and len(class_names) != 2:
        raise ValueError(f'When passing `label_mode="binary"`, there must be exactly 2 class_names. Received: '
                         f"class_names={class_names}")
    load = _text_loader(max_length)

    def empty(what):
        return f"No {what}text files found in directory {directory}. Allowed format: .txt"

    return dataset_utils.datasets_for_subset(paths, labels, class_names, label_mode, validation_split, subset, load,
                                             batch_size, shuffle, seed, empty)
