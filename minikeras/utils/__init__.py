"""Utilities: to_categorical, Sequence, batching."""
from minikeras.utils.categorical import to_categorical  # noqa: F401
from minikeras.utils.sequence import Sequence  # noqa: F401
from minikeras.utils.packing import pack_x_y_sample_weight, unpack_x_y_sample_weight  # noqa: F401
from minikeras.backend.keras_helpers import clear_session  # noqa: F401,E402
from minikeras.utils.progbar import Progbar  # noqa: F401,E402
