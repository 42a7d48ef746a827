"""``tf.data.experimental``'s names that Keras examples still use."""
from minikeras.data.dataset import AUTOTUNE, INFINITE_CARDINALITY, UNKNOWN_CARDINALITY  # noqa: F401


def cardinality(dataset):
    """``dataset.cardinality()`` (the older spelling)."""
    return dataset.cardinality()
