"""keras.layers.Add and its functional form ``add``."""
from minikeras import ops
from minikeras.layers.merging.base_merge import _Merge

__all__ = ["Add", "add"]


class Add(_Merge):
    """Elementwise sum of the inputs: ``Add()([a, b, c]) = a + b + c``."""

    def _merge_pair(self, a, b):
        return ops.add(a, b)


# Functional forms, as keras.layers.add([a, b]) etc.
def add(inputs, **kwargs):
    """``Add(**kwargs)(inputs)``."""
    return Add(**kwargs)(inputs)
