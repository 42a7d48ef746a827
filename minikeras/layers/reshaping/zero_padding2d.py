"""keras.layers.ZeroPadding2D."""
from minikeras.layers.reshaping.base_zero_padding import _ZeroPadding

__all__ = ["ZeroPadding2D"]


class ZeroPadding2D(_ZeroPadding):
    """Pad ``(batch, height, width, channels)`` with zero rows and columns.

    Args:
        padding: an int (all four sides), a pair (symmetric height, width),
            or ((top, bottom), (left, right)). Default (1, 1).
        data_format: None or "channels_last".
        **kwargs: base Layer arguments.

    Example:
        >>> ZeroPadding2D(((1, 0), (2, 2)))(np.zeros((1, 4, 4, 3), "float32")).shape
        (1, 5, 8, 3)
    """

    rank = 2

    def __init__(self, padding=(1, 1), data_format=None, **kwargs):
        super().__init__(padding, data_format, **kwargs)
