"""StackedRNNCells: several RNN cells run as one, each feeding the next, so
``RNN(StackedRNNCells([...]))`` is a deep recurrent layer stepping all its
levels together (Keras's ``keras.layers.StackedRNNCells``)."""
from minikeras import ops
from minikeras.layers.base import Layer
from minikeras.layers.core.wrapper import _deserialize, _serialize

__all__ = ["StackedRNNCells"]


def _sizes(cell):
    size = cell.state_size
    return list(size) if isinstance(size, (list, tuple)) else [size]


class StackedRNNCells(Layer):
    """Wrap a list of cells into one cell.

    Its ``state_size`` is the flat list of every cell's state sizes (first
    cell first): the generic RNN layer passes one flat list of states, which
    this cell splits among its cells.

    Args:
        cells: the cells (each with ``state_size`` and ``call(inputs, states)``).
        **kwargs: base Layer arguments.

    Raises:
        ValueError: a cell without ``call`` or ``state_size``.
    """

    def __init__(self, cells, **kwargs):
        if cells and isinstance(cells[0], Layer):
            kwargs.setdefault("dtype", cells[0].dtype)  # inputs are cast to it on the way in
        super().__init__(**kwargs)
        for cell in cells:
            if not hasattr(cell, "call"):
                raise ValueError(f"All cells must have a `call` method. Received cell without a `call` method: {cell}")
            if not hasattr(cell, "state_size"):
                raise ValueError(f"All cells must have a `state_size` attribute. Received cell without a "
                                 f"`state_size`: {cell}")
        self.cells = list(cells)

    @property
    def state_size(self):
        """Every cell's state sizes, flattened in order."""
        return [size for cell in self.cells for size in _sizes(cell)]

    @property
    def output_size(self):
        last = self.cells[-1]
        return getattr(last, "output_size", None) or _sizes(last)[0]

    def get_initial_state(self, batch_size=None):
        """Every cell's initial states, flattened in order."""
        states = []
        for cell in self.cells:
            if hasattr(cell, "get_initial_state"):
                initial = cell.get_initial_state(batch_size=batch_size)
                states.extend(initial if isinstance(initial, (list, tuple)) else [initial])
            else:
                states.extend(ops.zeros((batch_size, size), dtype=self.dtype) for size in _sizes(cell))
        return states

    def build(self, input_shape):
        for cell in self.cells:
            if not cell.built:
                cell.build(input_shape)
                cell.built = True
            input_shape = (input_shape[0], getattr(cell, "output_size", None) or _sizes(cell)[0])
        self.built = True

    def call(self, inputs, states, training=None):
        states = list(states) if isinstance(states, (list, tuple)) else [states]
        new_states, start = [], 0
        for cell in self.cells:
            count = len(_sizes(cell))
            own = states[start:start + count]
            start += count
            inputs, updated = cell(inputs, own, training=training)
            new_states.extend(updated if isinstance(updated, (list, tuple)) else [updated])
        return inputs, new_states

    def reset_dropout_mask(self):
        """Forget every cell's dropout masks (called by RNN before each sequence)."""
        for cell in self.cells:
            if hasattr(cell, "reset_dropout_mask"):
                cell.reset_dropout_mask()

    def get_config(self):
        return {**super().get_config(), "cells": [_serialize(cell) for cell in self.cells]}

    @classmethod
    def from_config(cls, config, custom_objects=None):
        config = dict(config)
        cells = [_deserialize(spec, custom_objects) for spec in config.pop("cells")]
        return cls(cells, **config)
