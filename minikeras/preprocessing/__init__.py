"""``keras.preprocessing``: the names Keras 3 keeps there (the dataset
utilities, ``preprocessing.image`` and ``preprocessing.sequence``)."""
from minikeras.preprocessing import image, sequence  # noqa: F401
from minikeras.utils.image_dataset import image_dataset_from_directory  # noqa: F401
from minikeras.utils.text_dataset import text_dataset_from_directory  # noqa: F401
from minikeras.utils.timeseries_dataset import timeseries_dataset_from_array  # noqa: F401

__all__ = ["image", "image_dataset_from_directory", "sequence", "text_dataset_from_directory",
           "timeseries_dataset_from_array"]
