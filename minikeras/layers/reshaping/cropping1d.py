"""keras.layers.Cropping1D."""
from minikeras.layers.reshaping.base_cropping import _Cropping

__all__ = ["Cropping1D"]


class Cropping1D(_Cropping):
    """Remove steps at both ends of ``(batch, steps, channels)``.

    Args:
        cropping: an int (both ends) or (start, end). Default (1, 1).
        **kwargs: base Layer arguments.
    """

    rank = 1

    def __init__(self, cropping=(1, 1), **kwargs):
        super().__init__(cropping, None, **kwargs)

    def get_config(self):
        config = super().get_config()
        del config["data_format"]
        return config
