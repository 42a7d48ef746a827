"""keras.layers.Average and ``average``."""
from minikeras import ops
from minikeras.layers.merging.base_merge import _Merge

__all__ = ["Average", "average"]


class Average(_Merge):
    """Elementwise mean of the inputs."""

    def _merge_pair(self, a, b):
        return ops.add(a, b)

    def _finish(self, output, count):
        return output * (1.0 / count) if count > 1 else output


def average(inputs, **kwargs):
    """``Average(**kwargs)(inputs)``."""
    return Average(**kwargs)(inputs)
