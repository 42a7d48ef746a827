"""Input pipelines with tf.data's methods: ``mk.data.Dataset`` and
``mk.data.AUTOTUNE`` (see `minikeras.data.dataset`).

The data utilities (``image_dataset_from_directory``, ...) return these
datasets; ``Dataset.from_tensor_slices`` makes one from arrays.
"""
from minikeras.data import experimental  # noqa: F401
from minikeras.data.dataset import AUTOTUNE, INFINITE_CARDINALITY, UNKNOWN_CARDINALITY, Dataset  # noqa: F401

__all__ = ["AUTOTUNE", "Dataset", "INFINITE_CARDINALITY", "UNKNOWN_CARDINALITY", "experimental"]
