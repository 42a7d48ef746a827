"""keras.layers.Concatenate and ``concatenate``."""
import numpy

from minikeras import ops
from minikeras.layers.merging.base_merge import _Merge, _shape_text

__all__ = ["Concatenate", "concatenate"]


class Concatenate(_Merge):
    """Join the inputs along ``axis`` (default -1, the features).

    Args:
        axis: the axis to join along; every other axis must match.
        **kwargs: base Layer arguments.
    """

    def __init__(self, axis=-1, **kwargs):
        super().__init__(**kwargs)
        if isinstance(axis, bool) or not isinstance(axis, (int, numpy.integer)):
            raise TypeError(f"Concatenate: axis must be an int, received axis={axis!r}.")
        self.axis = int(axis)

    def _check_shapes(self, shapes):
        rank = len(shapes[0])
        if any(len(shape) != rank for shape in shapes) or not -rank <= self.axis < rank:
            raise ValueError(
                f"Layer '{self.name}' (Concatenate, axis={self.axis}) needs inputs of the same rank with that "
                f"axis, received shapes {_shape_text(shapes)}."
            )
        axis = self.axis % rank
        for position in range(rank):
            if position != axis and len({shape[position] for shape in shapes}) > 1:
                raise ValueError(
                    f"Layer '{self.name}' (Concatenate, axis={self.axis}) needs inputs whose shapes match except "
                    f"on the concatenation axis, received shapes {_shape_text(shapes)}."
                )

    def call(self, inputs):
        self._check_inputs(inputs)
        self._check_shapes([item.shape for item in inputs])
        if len(inputs) == 1:
            return inputs[0]
        return ops.concatenate(list(inputs), axis=self.axis)

    def get_config(self):
        return {**super().get_config(), "axis": self.axis}


def concatenate(inputs, axis=-1, **kwargs):
    """``Concatenate(axis=axis, **kwargs)(inputs)``."""
    return Concatenate(axis=axis, **kwargs)(inputs)
