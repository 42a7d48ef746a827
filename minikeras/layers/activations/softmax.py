"""keras.layers.Softmax (with Keras's mask: masked positions get a large negative)."""
from minikeras import ops
from minikeras.layers.activations.elementwise_activation import _ElementwiseActivation
from minikeras.layers.core.dense import _float_input

__all__ = ["Softmax"]


class Softmax(_ElementwiseActivation):
    """Softmax over ``axis``; ``call(inputs, mask=None)`` gives masked
    positions (mask False) probability 0.

    Args:
        axis: an int or a list of ints (the softmax runs over all of them).
        **kwargs: base Layer arguments.

    Example:
        >>> Softmax()(np.array([[1.0, 2.0, 3.0]])).numpy().sum()
        1.0
    """

    def __init__(self, axis=-1, **kwargs):
        super().__init__(**kwargs)
        self.axis = list(axis) if isinstance(axis, (list, tuple)) else axis

    def call(self, inputs, mask=None):
        inputs = _float_input(self, inputs)
        if mask is not None:
            mask = self._check_mask(inputs, mask)
            # -1e9 (float32) stands for -inf: exp underflows to 0 without NaN
            # when a whole row is masked (Keras does the same).
            inputs = ops.where(mask, inputs, _large_negative(inputs.dtype))
        if isinstance(self.axis, list) and len(self.axis) > 1:
            outputs = ops.exp(inputs - ops.logsumexp(inputs, axis=tuple(self.axis), keepdims=True))
        else:
            axis = self.axis[0] if isinstance(self.axis, list) else self.axis
            outputs = ops.softmax(inputs, axis=axis)
        if mask is not None:
            outputs = ops.where(mask, outputs, 0.0)
        return outputs

    def _check_mask(self, inputs, mask):
        mask_shape, input_shape = tuple(mask.shape), tuple(inputs.shape)
        broadcastable = len(mask_shape) <= len(input_shape) and all(
            m == 1 or m == i for m, i in zip(mask_shape[::-1], input_shape[::-1]))
        if not broadcastable:
            raise ValueError(
                f"Layer '{self.name}' (Softmax): the mask must broadcast to the inputs, received mask shape "
                f"{mask_shape} for inputs of shape {input_shape}."
            )
        if mask.dtype.kind != "b":
            mask = ops.greater(mask, 0.5)
        return mask

    def get_config(self):
        return {**super().get_config(), "axis": self.axis}


def _large_negative(dtype):
    return -3e4 if dtype.itemsize <= 2 else -1e9
