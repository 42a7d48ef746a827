"""Utilities: to_categorical, PyDataset/Sequence, pad_sequences, get_file, set_random_seed."""
from minikeras.utils.categorical import to_categorical  # noqa: F401
from minikeras.utils.py_dataset import PyDataset  # noqa: F401
from minikeras.utils.sequence import Sequence  # noqa: F401
from minikeras.utils.packing import pack_x_y_sample_weight, unpack_x_y_sample_weight  # noqa: F401
from minikeras.backend.keras_helpers import clear_session  # noqa: F401,E402
from minikeras.utils.progbar import Progbar  # noqa: F401,E402
from minikeras.utils.random_seed import set_random_seed  # noqa: F401
from minikeras.utils.pad_sequences import pad_sequences  # noqa: F401
from minikeras.utils.get_file import get_file  # noqa: F401
