"""Utilities: to_categorical, Sequence, batching, set_random_seed."""
from minikeras.utils.categorical import to_categorical  # noqa: F401
from minikeras.utils.sequence import Sequence  # noqa: F401
from minikeras.utils.random_seed import set_random_seed  # noqa: F401
