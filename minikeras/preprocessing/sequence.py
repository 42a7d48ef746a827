"""``keras.preprocessing.sequence``: pad_sequences under its old address."""
from minikeras.utils.pad_sequences import pad_sequences  # noqa: F401

__all__ = ["pad_sequences"]
