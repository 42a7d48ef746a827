"""keras.layers.Multiply and ``multiply``."""
from minikeras import ops
from minikeras.layers.merging.base_merge import _Merge

__all__ = ["Multiply", "multiply"]


class Multiply(_Merge):
    """Elementwise product of the inputs."""

    def _merge_pair(self, a, b):
        return ops.multiply(a, b)


def multiply(inputs, **kwargs):
    """``Multiply(**kwargs)(inputs)``."""
    return Multiply(**kwargs)(inputs)
