"""keras.layers.SpatialDropout1D/2D/3D: whole feature maps dropped."""
from minikeras.layers.input_spec import InputSpec
from minikeras.layers.regularization.dropout import Dropout

__all__ = ["SpatialDropout1D", "SpatialDropout2D", "SpatialDropout3D"]


class _SpatialDropout(Dropout):
    """Dropout of whole feature maps: one draw per (sample, channel)."""

    _rank = 2

    def __init__(self, rate, data_format=None, seed=None, **kwargs):
        super().__init__(rate, seed=seed, **kwargs)
        data_format = data_format or "channels_last"
        if data_format not in ("channels_last", "channels_first"):
            raise ValueError(
                f"{type(self).__name__}: data_format must be 'channels_last' or 'channels_first', "
                f"received {data_format!r}."
            )
        self.data_format = data_format
        self.input_spec = InputSpec(ndim=self._rank + 2)

    def _noise_shape(self, inputs):
        shape = inputs.shape
        if self.data_format == "channels_last":
            return (shape[0],) + (1,) * self._rank + (shape[-1],)
        return (shape[0], shape[1]) + (1,) * self._rank

    def get_config(self):
        config = super().get_config()
        config.pop("noise_shape")
        return {**config, "data_format": self.data_format}


class SpatialDropout1D(_SpatialDropout):
    """Drop whole channels of ``(batch, steps, channels)`` inputs (mask
    shape ``(batch, 1, channels)``).

    Args:
        rate: the fraction of channels to drop.
        seed: optional int for reproducible masks.
        **kwargs: base Layer arguments.
    """

    _rank = 1

    def __init__(self, rate, seed=None, **kwargs):
        super().__init__(rate, data_format="channels_last", seed=seed, **kwargs)

    def get_config(self):
        config = super().get_config()
        config.pop("data_format")
        return config


class SpatialDropout2D(_SpatialDropout):
    """Drop whole feature maps of images: mask shape ``(batch, 1, 1, channels)``
    (channels_last) or ``(batch, channels, 1, 1)`` (channels_first).

    Args:
        rate: the fraction of channels to drop.
        data_format: "channels_last" (default) or "channels_first".
        seed: optional int for reproducible masks.
        **kwargs: base Layer arguments.
    """

    _rank = 2


class SpatialDropout3D(_SpatialDropout):
    """Drop whole feature volumes: mask ``(batch, 1, 1, 1, channels)``.

    Args:
        rate: the fraction of channels to drop.
        data_format: "channels_last" (default) or "channels_first".
        seed: optional int for reproducible masks.
        **kwargs: base Layer arguments.
    """

    _rank = 3
