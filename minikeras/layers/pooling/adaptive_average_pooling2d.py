"""keras.layers.AdaptiveAveragePooling2D."""
from minikeras.layers.pooling.base_adaptive_pooling import _AdaptivePooling

__all__ = ["AdaptiveAveragePooling2D"]


class AdaptiveAveragePooling2D(_AdaptivePooling):
    """Average images into ``output_size`` (an int or (height, width)). Args as 1D."""

    rank, mode = 2, "average"
