"""keras.layers.ZeroPadding1D."""
from minikeras.layers.reshaping.base_zero_padding import _ZeroPadding

__all__ = ["ZeroPadding1D"]


class ZeroPadding1D(_ZeroPadding):
    """Pad ``(batch, steps, channels)`` with zero steps.

    Args:
        padding: an int (both ends) or (left, right). Default 1.
        **kwargs: base Layer arguments.
    """

    rank = 1

    def __init__(self, padding=1, data_format=None, **kwargs):
        super().__init__(padding, data_format, **kwargs)
