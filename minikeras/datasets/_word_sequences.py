"""What Keras's IMDB and Reuters loaders do to the stored word-id sequences.

The files store each text as a list of word ranks (1 = most frequent word).
Loading shuffles with ``numpy.random.RandomState(seed)``, shifts every rank
by ``index_from`` and puts ``start_char`` in front, drops sequences of
``maxlen`` words or more, and replaces ranks outside ``[skip_top, num_words)``
with ``oov_char`` (or drops them when ``oov_char`` is None); so the same
arguments give the same arrays as ``keras.datasets``.
"""
import json
import numbers

import numpy

from minikeras.datasets._errors import CorruptDatasetError


def check_sequences(array, name, path):
    """Raises CorruptDatasetError unless ``array`` is 1-D and holds lists of ints."""
    if not isinstance(array, numpy.ndarray) or array.ndim != 1:
        raise CorruptDatasetError(f"{path}: {name!r} must be a 1-D array of word-id lists")
    for position, sequence in enumerate(array):
        if not isinstance(sequence, (list, numpy.ndarray)) or not all(
                isinstance(word, numbers.Integral) and not isinstance(word, bool) for word in sequence):
            raise CorruptDatasetError(f"{path}: {name}[{position}] is not a list of integer word ids")


def check_labels(labels, sequences, name, path):
    """Raises CorruptDatasetError unless ``labels`` are integers, one per sequence."""
    if not isinstance(labels, numpy.ndarray) or labels.dtype.kind not in "iu" or labels.shape != (len(sequences),):
        raise CorruptDatasetError(f"{path}: {name!r} must be {len(sequences)} integer labels")


def shuffled(rng, sequences, labels):
    """Both arrays in one random order drawn from ``rng`` (a RandomState)."""
    order = numpy.arange(len(sequences))
    rng.shuffle(order)
    return sequences[order], labels[order]


def shift(sequences, start_char, index_from):
    """Adds ``index_from`` to every id and puts ``start_char`` first (when not None)."""
    prefix = [] if start_char is None else [start_char]
    return [prefix + [int(word) + index_from for word in sequence] for sequence in sequences]


def drop_long(maxlen, sequences, labels):
    """Keeps the (sequence, label) pairs whose sequence is shorter than ``maxlen``."""
    kept = [index for index, sequence in enumerate(sequences) if len(sequence) < maxlen]
    return [sequences[index] for index in kept], labels[kept]


def limit_vocabulary(sequences, num_words, skip_top, oov_char):
    """Maps ids outside ``[skip_top, num_words)`` to ``oov_char``, or drops them if it is None."""
    if not num_words:
        num_words = max((max(sequence) for sequence in sequences if sequence), default=0)
    if oov_char is not None:
        return [[word if skip_top <= word < num_words else oov_char for word in sequence] for sequence in sequences]
    return [[word for word in sequence if skip_top <= word < num_words] for sequence in sequences]


def object_array(sequences):
    """A 1-D object array of lists (``numpy.array`` would make a 2-D array of equal-length lists)."""
    array = numpy.empty(len(sequences), dtype=object)
    for index, sequence in enumerate(sequences):
        array[index] = sequence
    return array


def check_options(function_name, maxlen, skip_top, num_words):
    for name, value in (("maxlen", maxlen), ("num_words", num_words)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1):
            raise ValueError(f"{function_name}: {name} must be a positive int or None, received {value!r}.")
    if isinstance(skip_top, bool) or not isinstance(skip_top, numbers.Integral) or skip_top < 0:
        raise ValueError(f"{function_name}: skip_top must be a non-negative int, received {skip_top!r}.")


def read_word_index(path):
    """Reads a ``{word: rank}`` JSON file; raises CorruptDatasetError for anything else."""
    try:
        with open(path, encoding="utf-8") as stream:
            index = json.load(stream)
    except (ValueError, UnicodeDecodeError) as error:
        raise CorruptDatasetError(f"{path}: is not a JSON word index ({error})") from error
    if not isinstance(index, dict) or not all(
            isinstance(word, str) and isinstance(rank, int) for word, rank in index.items()):
        raise CorruptDatasetError(f"{path}: must map words to integer ranks")
    return index
