"""InputSpec: what a built layer accepts, checked on every call."""


class InputSpec:
    """Constraints on a layer's input, like ``keras.InputSpec``.

    Args:
        ndim: exact rank, or None.
        min_ndim: minimum rank, or None.
        axes: ``{axis: size}`` for axes whose size is fixed (e.g. ``{-1: 784}``).
    """

    def __init__(self, ndim=None, min_ndim=None, axes=None):
        self.ndim = ndim
        self.min_ndim = min_ndim
        self.axes = dict(axes or {})

    def check(self, layer_name, shape):
        """Raise ValueError naming the layer when ``shape`` does not fit."""
        shape = tuple(shape)
        if self.ndim is not None and len(shape) != self.ndim:
            raise ValueError(
                f"Input of layer '{layer_name}' is incompatible: expected ndim={self.ndim}, "
                f"received ndim={len(shape)} (shape {shape})."
            )
        if self.min_ndim is not None and len(shape) < self.min_ndim:
            raise ValueError(
                f"Input of layer '{layer_name}' is incompatible: expected min_ndim={self.min_ndim}, "
                f"received ndim={len(shape)} (shape {shape})."
            )
        for axis, size in self.axes.items():
            if size is None:
                continue
            if -len(shape) <= axis < len(shape) and shape[axis] is not None and shape[axis] != size:
                axis_text = "last input axis" if axis == -1 else f"input axis {axis}"
                raise ValueError(
                    f"Layer '{layer_name}' expects the {axis_text} to be {size}, received shape {shape}."
                )
