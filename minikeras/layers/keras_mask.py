"""The mask a layer attaches to its output (Keras's ``_keras_mask``).

The side table lives in :mod:`minikeras.autograd.keras_mask`, beside
``Tensor``, so that ``tensor._keras_mask`` reads and writes it as in Keras;
layers use these two functions.
"""
from minikeras.autograd.keras_mask import get_keras_mask, set_keras_mask

__all__ = ["get_keras_mask", "set_keras_mask"]
