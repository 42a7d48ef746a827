"""keras.layers.AdaptiveAveragePooling1D."""
from minikeras.layers.pooling.base_adaptive_pooling import _AdaptivePooling

__all__ = ["AdaptiveAveragePooling1D"]


class AdaptiveAveragePooling1D(_AdaptivePooling):
    """Average ``(batch, steps, channels)`` into ``output_size`` steps.

    Args:
        output_size: an int or a 1-tuple.
        data_format: None or "channels_last".
        **kwargs: base Layer arguments.
    """

    rank, mode = 1, "average"
