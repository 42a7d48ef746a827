"""keras.layers.AdaptiveMaxPooling2D."""
from minikeras.layers.pooling.base_adaptive_pooling import _AdaptivePooling

__all__ = ["AdaptiveMaxPooling2D"]


class AdaptiveMaxPooling2D(_AdaptivePooling):
    """Max-pool images into ``output_size``. Args as AdaptiveAveragePooling1D."""

    rank, mode = 2, "max"
