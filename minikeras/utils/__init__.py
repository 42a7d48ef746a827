"""Utilities: to_categorical, PyDataset/Sequence, pad_sequences, get_file, set_random_seed."""
from minikeras.utils.categorical import to_categorical  # noqa: F401
from minikeras.utils.py_dataset import PyDataset  # noqa: F401
from minikeras.utils.sequence import Sequence  # noqa: F401
from minikeras.utils.random_seed import set_random_seed  # noqa: F401
from minikeras.utils.pad_sequences import pad_sequences  # noqa: F401
from minikeras.utils.get_file import get_file  # noqa: F401
