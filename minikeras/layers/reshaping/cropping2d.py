"""keras.layers.Cropping2D."""
from minikeras.layers.reshaping.base_cropping import _Cropping

__all__ = ["Cropping2D"]


class Cropping2D(_Cropping):
    """Remove rows and columns at the borders of ``(batch, height, width, channels)``.

    Args:
        cropping: an int (all four sides), a pair (symmetric height, width),
            or ((top, bottom), (left, right)). Default no cropping.
        data_format: None or "channels_last".
        **kwargs: base Layer arguments.

    Raises:
        ValueError: on call, when the cropping removes a whole axis.
    """

    rank = 2

    def __init__(self, cropping=((0, 0), (0, 0)), data_format=None, **kwargs):
        super().__init__(cropping, data_format, **kwargs)
