"""The base of Cropping1D/2D/3D."""
from minikeras import ops
from minikeras.layers.base import Layer
from minikeras.layers.convolutional.base_conv import _check_channels_last
from minikeras.layers.input_spec import InputSpec
from minikeras.layers.reshaping.base_zero_padding import _pairs


# --------------------------------------------------------------- Cropping
class _Cropping(Layer):
    rank = 2

    def __init__(self, cropping, data_format=None, **kwargs):
        super().__init__(**kwargs)
        self.cropping = _pairs(type(self).__name__, "cropping", cropping, self.rank)
        self.data_format = _check_channels_last(type(self).__name__, data_format)
        self.input_spec = InputSpec(ndim=self.rank + 2)

    def call(self, inputs):
        index = [slice(None)]
        for axis, (size, (before, after)) in enumerate(zip(inputs.shape[1:-1], self.cropping), 1):
            if before + after >= size:
                raise ValueError(
                    f"Layer '{self.name}': cropping {self.cropping} removes every element of axis {axis} "
                    f"(size {size}) of the input of shape {tuple(inputs.shape)}."
                )
            index.append(slice(before, size - after))
        return ops.getitem(inputs, tuple(index) + (slice(None),))

    def compute_output_shape(self, input_shape):
        spatial = tuple(None if size is None else size - a - b
                        for size, (a, b) in zip(input_shape[1:-1], self.cropping))
        return (input_shape[0],) + spatial + (input_shape[-1],)

    def get_config(self):
        cropping = tuple(tuple(p) for p in self.cropping) if self.rank == 2 else tuple(self.cropping[0])
        return {**super().get_config(), "cropping": cropping, "data_format": self.data_format}
