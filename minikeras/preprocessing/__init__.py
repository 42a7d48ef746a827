"""Keras's ``keras.preprocessing`` names that scripts still import
(``preprocessing.sequence.pad_sequences``)."""
from minikeras.preprocessing import sequence  # noqa: F401
