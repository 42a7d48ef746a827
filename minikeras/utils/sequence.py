"""Sequence: Keras 2's name for `PyDataset`, kept as Keras 3 keeps it."""
from minikeras.data.py_dataset import PyDataset

#: ``keras.utils.Sequence`` is ``PyDataset`` in Keras 3.
Sequence = PyDataset
