"""CSVLogger: stream the epoch logs to a CSV file."""
import collections.abc
import csv
import os

import numpy

from minikeras.callbacks.callback import Callback


def _cell(value):
    """A log value as a CSV cell: numbers as they are, sequences as "[a, b]"."""
    if isinstance(value, str):
        return value
    if isinstance(value, numpy.ndarray) and value.ndim == 0:
        return value.item()
    if isinstance(value, collections.abc.Iterable):
        return f"[{', '.join(map(str, value))}]"
    return value


class CSVLogger(Callback):
    """Write one CSV row per epoch: the epoch (0-based) and every log value.

    The columns are ``epoch`` then the log keys of the first epoch, sorted.
    If no ``val_`` key is there yet (``validation_freq > 1``), ``val_``
    columns are added for every key, as Keras does, and filled with "NA"
    until validation runs. The file is flushed after every row, so it can
    be read while training runs.

    Args:
        filename: the CSV file (a path).
        separator: the column separator.
        append: append to an existing file (no second header if it already
            has content) instead of overwriting it.

    Example:
        >>> model.fit(x, y, epochs=5, callbacks=[CSVLogger("training.log")])  # doctest: +SKIP
    """

    def __init__(self, filename, separator=",", append=False):
        super().__init__()
        self.filename = os.fspath(filename)
        self.sep = separator
        self.append = append
        self.keys = None
        self.writer = None
        self.csv_file = None
        self.append_header = True

    def on_train_begin(self, logs=None):
        self.append_header = True
        if self.append and os.path.exists(self.filename):
            with open(self.filename, "r", newline="") as existing:
                self.append_header = not existing.readline()
        if self.csv_file is not None and not self.csv_file.closed:
            self.csv_file.close()
        self.csv_file = open(self.filename, "a" if self.append else "w", newline="")
        self.writer = None
        self.keys = None

    def on_epoch_end(self, epoch, logs=None):
        logs = logs or {}
        if self.csv_file is None:  # used outside fit(): open on first use
            self.on_train_begin()
        if self.keys is None:
            self.keys = sorted(logs)
            if not any(key.startswith("val_") for key in self.keys):
                self.keys.extend("val_" + key for key in list(self.keys))
        if self.writer is None:
            self.writer = csv.DictWriter(self.csv_file, fieldnames=["epoch"] + self.keys, delimiter=self.sep,
                                         lineterminator="\n")
            if self.append_header:
                self.writer.writeheader()
        row = {"epoch": epoch}
        row.update((key, _cell(logs.get(key, "NA"))) for key in self.keys)
        self.writer.writerow(row)
        self.csv_file.flush()

    def on_train_end(self, logs=None):
        if self.csv_file is not None and not self.csv_file.closed:
            self.csv_file.close()
        self.writer = None
