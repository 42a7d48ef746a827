"""keras.layers.UpSampling1D."""
from minikeras.layers.reshaping.up_sampling2d import UpSampling2D

__all__ = ["UpSampling1D"]


class UpSampling1D(UpSampling2D):
    """Repeat each step of ``(batch, steps, channels)`` ``size`` times.

    Args:
        size: an int, default 2.
        **kwargs: base Layer arguments.
    """

    rank = 1

    def __init__(self, size=2, **kwargs):
        super().__init__(size=size, **kwargs)

    def get_config(self):
        config = super().get_config()
        config["size"] = self.size[0]
        del config["data_format"], config["interpolation"]
        return config
