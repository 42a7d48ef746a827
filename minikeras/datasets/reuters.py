"""Reuters newswires in 46 topics, from Keras's ``reuters.npz``.

11,228 newswires, each a list of word ids ranked by frequency, split into
train and test after a seeded shuffle, as ``keras.datasets.reuters`` does.
The ragged lists are read with an unpickler that allows only NumPy array
reconstruction, never ``allow_pickle=True``.

Example:
    >>> from minikeras.datasets import reuters
    >>> (x_train, y_train), (x_test, y_test) = reuters.load_data(num_words=10000, test_split=0.2)
"""
import numbers

import numpy

from minikeras.datasets import _files, _npz
from minikeras.datasets import _word_sequences as words

_URL = "https://storage.googleapis.com/tensorflow/tf-keras-datasets/reuters.npz"
_SHA256 = "d6586e694ee56d7a4e65172e12b3e987c03096cb01eab99753921ef915959916"
_INDEX_URL = "https://storage.googleapis.com/tensorflow/tf-keras-datasets/reuters_word_index.json"
_INDEX_MD5 = "4d44cc38712099c9e383dc6e5f11a921"


def load_data(path="reuters.npz", num_words=None, skip_top=0, maxlen=None, test_split=0.2, seed=113,
              start_char=1, oov_char=2, index_from=3):
    """Loads Reuters, with Keras's arguments and results.

    Args:
        path: the file name in the cache; Keras's cache is searched too.
        num_words, skip_top, maxlen, seed, start_char, oov_char, index_from:
            as in `minikeras.datasets.imdb.load_data`.
        test_split: the fraction of newswires kept for the test set, in [0, 1).

    Returns:
        ``((x_train, y_train), (x_test, y_test))``: 1-D object arrays of
        lists of ints and int topic labels 0-45.

    Raises:
        DatasetNotFoundError, CorruptDatasetError: as for IMDB.
        ValueError: bad arguments.
    """
    words.check_options("reuters.load_data", maxlen, skip_top, num_words)
    if isinstance(test_split, bool) or not isinstance(test_split, numbers.Real) or not 0 <= test_split < 1:
        raise ValueError(f"reuters.load_data: test_split must be in [0, 1), received {test_split!r}.")
    remote = _files.RemoteFile(dataset="Reuters", name=path, urls=(_URL,), checksum=("sha256", _SHA256))
    arrays = _files.fetch(remote, _read, local_copies=(f"~/.keras/datasets/{path}",))
    sequences, labels = words.shuffled(numpy.random.RandomState(seed), arrays["x"], arrays["y"])
    sequences = words.shift(sequences, start_char, index_from)
    if maxlen:
        sequences, labels = words.drop_long(maxlen, sequences, labels)
    sequences = words.limit_vocabulary(sequences, num_words, skip_top, oov_char)
    split = int(len(sequences) * (1 - test_split))
    return ((words.object_array(sequences[:split]), labels[:split]),
            (words.object_array(sequences[split:]), labels[split:]))


def _read(path):
    arrays = _npz.read_npz(path, ("x", "y"))
    words.check_sequences(arrays["x"], "x", path)
    words.check_labels(arrays["y"], arrays["x"], "y", path)
    return arrays


def get_word_index(path="reuters_word_index.json"):
    """Returns the ``{word: rank}`` dict of the Reuters ids (before ``index_from`` is added)."""
    remote = _files.RemoteFile(dataset="Reuters word index", name=path, urls=(_INDEX_URL,),
                               checksum=("md5", _INDEX_MD5))
    return _files.fetch(remote, words.read_word_index, local_copies=(f"~/.keras/datasets/{path}",))
