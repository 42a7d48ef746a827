"""IMDB movie reviews, positive or negative, from Keras's ``imdb.npz``.

25,000 training and 25,000 test reviews, each a list of word ids (ranked by
frequency), labels 0 (negative) and 1 (positive). The file stores the
ragged lists as pickled object arrays; they are read with an unpickler that
allows only NumPy array reconstruction, never ``allow_pickle=True``.

Example:
    >>> from minikeras.datasets import imdb
    >>> (x_train, y_train), (x_test, y_test) = imdb.load_data(num_words=10000)
    >>> x_train = minikeras.utils.pad_sequences(x_train, maxlen=200)
"""
import numpy

from minikeras.datasets import _files, _npz
from minikeras.datasets import _word_sequences as words

_URL = "https://storage.googleapis.com/tensorflow/tf-keras-datasets/imdb.npz"
_SHA256 = "69664113be75683a8fe16e3ed0ab59fda8886cb3cd7ada244f7d9544e4676b9f"
_INDEX_URL = "https://storage.googleapis.com/tensorflow/tf-keras-datasets/imdb_word_index.json"
_INDEX_MD5 = "bfafd718b763782e994055a2d397834f"


def load_data(path="imdb.npz", num_words=None, skip_top=0, maxlen=None, seed=113, start_char=1, oov_char=2,
              index_from=3):
    """Loads IMDB, with Keras's arguments and results.

    Args:
        path: the file name in the cache (``~/.minikeras/datasets``); Keras's
            cache (``~/.keras/datasets``) is searched too.
        num_words: keep the ``num_words`` most frequent words (ids below it);
            others become ``oov_char``. Default: all.
        skip_top: also treat the ``skip_top`` most frequent words as unknown.
        maxlen: drop reviews of ``maxlen`` words or more.
        seed: the shuffling seed.
        start_char: the id put at the start of every review (None: none).
        oov_char: the id of unknown words (None: drop them).
        index_from: added to every word id (ids 0, 1, 2 are padding, start, unknown).

    Returns:
        ``((x_train, y_train), (x_test, y_test))``: 1-D object arrays of
        lists of ints, and int label arrays.

    Raises:
        DatasetNotFoundError: no copy and no network (the message says where to put it).
        CorruptDatasetError: the file is malformed.
        ValueError: bad arguments, or ``maxlen`` leaves no review.
    """
    words.check_options("imdb.load_data", maxlen, skip_top, num_words)
    remote = _files.RemoteFile(dataset="IMDB", name=path, urls=(_URL,), checksum=("sha256", _SHA256))
    arrays = _files.fetch(remote, _read, local_copies=(f"~/.keras/datasets/{path}",))
    rng = numpy.random.RandomState(seed)
    x_train, y_train = words.shuffled(rng, arrays["x_train"], arrays["y_train"])
    x_test, y_test = words.shuffled(rng, arrays["x_test"], arrays["y_test"])
    x_train, x_test = (words.shift(x, start_char, index_from) for x in (x_train, x_test))
    if maxlen:
        x_train, y_train = words.drop_long(maxlen, x_train, y_train)
        x_test, y_test = words.drop_long(maxlen, x_test, y_test)
        if not x_train or not x_test:
            raise ValueError(f"imdb.load_data: no review is shorter than maxlen={maxlen}; increase maxlen.")
    sequences = words.limit_vocabulary(x_train + x_test, num_words, skip_top, oov_char)
    split = len(x_train)
    return ((words.object_array(sequences[:split]), y_train),
            (words.object_array(sequences[split:]), y_test))


def _read(path):
    arrays = _npz.read_npz(path, ("x_train", "y_train", "x_test", "y_test"))
    for split in ("train", "test"):
        words.check_sequences(arrays[f"x_{split}"], f"x_{split}", path)
        words.check_labels(arrays[f"y_{split}"], arrays[f"x_{split}"], f"y_{split}", path)
    return arrays


def get_word_index(path="imdb_word_index.json"):
    """Returns the ``{word: rank}`` dict of the IMDB ids (before ``index_from`` is added)."""
    remote = _files.RemoteFile(dataset="IMDB word index", name=path, urls=(_INDEX_URL,),
                               checksum=("md5", _INDEX_MD5))
    return _files.fetch(remote, words.read_word_index, local_copies=(f"~/.keras/datasets/{path}",))
