"""keras.layers.Cropping3D."""
from minikeras.layers.reshaping.base_cropping import _Cropping
from minikeras.layers.reshaping.zero_padding3d import _pairs_3d

__all__ = ["Cropping3D"]


class Cropping3D(_Cropping):
    """Remove borders of ``(batch, depth, height, width, channels)``.

    Args:
        cropping: an int, 3 ints (symmetric per axis) or 3 (before, after)
            pairs. Default ((1, 1), (1, 1), (1, 1)).
        data_format: None or "channels_last".
        **kwargs: base Layer arguments.
    """

    rank = 3

    def __init__(self, cropping=((1, 1), (1, 1), (1, 1)), data_format=None, **kwargs):
        super().__init__(_pairs_3d("Cropping3D", "cropping", cropping), data_format, **kwargs)

    def get_config(self):
        config = super().get_config()
        config["cropping"] = tuple(tuple(pair) for pair in self.cropping)
        return config
