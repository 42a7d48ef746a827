"""The exceptions raised by ``minikeras.datasets``."""


class DatasetError(RuntimeError):
    """Base class of every error raised while finding or reading a dataset."""


class DatasetNotFoundError(DatasetError):
    """No usable copy of a dataset file exists and downloading it failed.

    The message names the file, the full path where it should be put in the
    cache directory, the places already searched and the URLs it is published
    at, so the dataset can be installed by hand on a machine with no network.
    """


class CorruptDatasetError(DatasetError):
    """A dataset file is truncated, corrupt or not in the expected format.

    Raised by the format readers (bad IDX magic, data shorter than its header
    promises, gzip or zip errors, missing pickle keys, wrong counts) and for a
    download whose checksum differs from the published one.
    """
