"""keras.layers.ZeroPadding3D."""
from minikeras.layers.reshaping.base_zero_padding import _pairs, _ZeroPadding
from minikeras._support.argument_validation import is_int

__all__ = ["ZeroPadding3D"]


def _pairs_3d(class_name, name, value):
    """An int (every side), three ints (symmetric per axis) or three pairs."""
    if isinstance(value, (tuple, list)) and len(value) == 3 and all(is_int(v) for v in value):
        value = tuple((int(v), int(v)) for v in value)
    try:
        return _pairs(class_name, name, value, 3)
    except ValueError:
        raise ValueError(f"{class_name}: {name} must be an int, a tuple of 3 ints, or a tuple of 3 pairs of ints "
                         f"((before, after) per axis), received {value!r}.") from None


class ZeroPadding3D(_ZeroPadding):
    """Pad ``(batch, depth, height, width, channels)`` with zeros.

    Args:
        padding: an int, 3 ints (symmetric per axis) or 3 (before, after)
            pairs. Default (1, 1, 1).
        data_format: None or "channels_last".
        **kwargs: base Layer arguments.
    """

    rank = 3

    def __init__(self, padding=((1, 1), (1, 1), (1, 1)), data_format=None, **kwargs):
        super().__init__(_pairs_3d("ZeroPadding3D", "padding", padding), data_format, **kwargs)

    def get_config(self):
        config = super().get_config()
        config["padding"] = tuple(tuple(pair) for pair in self.padding)
        return config
