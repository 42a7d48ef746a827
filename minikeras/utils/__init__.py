"""Utilities: to_categorical, PyDataset/Sequence, pad_sequences, get_file, set_random_seed."""
from minikeras.utils.categorical import to_categorical  # noqa: F401
from minikeras.data.py_dataset import PyDataset  # noqa: F401
from minikeras.utils.sequence import Sequence  # noqa: F401
from minikeras._support.packing import pack_x_y_sample_weight, unpack_x_y_sample_weight  # noqa: F401
from minikeras.backend.keras_helpers import clear_session  # noqa: F401,E402
from minikeras._support.progbar import Progbar  # noqa: F401,E402
from minikeras.utils.random_seed import set_random_seed  # noqa: F401
from minikeras.utils.pad_sequences import pad_sequences  # noqa: F401
from minikeras.utils.get_file import get_file  # noqa: F401
from minikeras.utils.config_object import Config  # noqa: F401,E402
from minikeras._support.io_utils import (  # noqa: F401,E402
    disable_interactive_logging, enable_interactive_logging, is_interactive_logging_enabled,
)
from minikeras.utils.source_inputs import get_source_inputs  # noqa: F401,E402
from minikeras.backend.keras_helpers import is_keras_tensor  # noqa: F401,E402
from minikeras.backend.dtypes import standardize_dtype  # noqa: F401,E402
from minikeras._support.object_registration import (  # noqa: F401,E402
    register_keras_serializable, CustomObjectScope, custom_object_scope, get_custom_objects, get_registered_name, get_registered_object,
)
from minikeras.saving.serialization_lib import deserialize_keras_object, serialize_keras_object  # noqa: F401,E402
from minikeras.utils.image_utils import array_to_img, img_to_array, load_img, save_img  # noqa: F401,E402
from minikeras.utils.image_dataset import image_dataset_from_directory  # noqa: F401,E402
from minikeras.utils.text_dataset import text_dataset_from_directory  # noqa: F401,E402
from minikeras.utils.audio_dataset import audio_dataset_from_directory  # noqa: F401,E402
from minikeras.utils.timeseries_dataset import timeseries_dataset_from_array  # noqa: F401,E402
from minikeras.utils.split_dataset import normalize, split_dataset  # noqa: F401,E402
from minikeras.utils.model_visualization import model_to_dot, plot_model  # noqa: F401,E402


def __getattr__(name):
    # FeatureSpace is a layer: loaded on first use, as minikeras loads its layers.
    if name == "FeatureSpace":
        from minikeras.layers.preprocessing.feature_space import FeatureSpace

        return FeatureSpace
    raise AttributeError(f"module 'minikeras.utils' has no attribute {name!r}")
