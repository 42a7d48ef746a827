"""The merging layers' base: a list of tensors, broadcast or concatenated into one."""
from minikeras.autograd import Tensor
from minikeras.layers.base import Layer


def _shape_text(shapes):
    return ", ".join(str(tuple(shape)) for shape in shapes)


class _Merge(Layer):
    """Base of the merge layers: checks the list of inputs, then reduces it
    pairwise with ``_merge_pair``."""

    _min_inputs = 1
    _max_inputs = None

    def _check_inputs(self, inputs):
        if not isinstance(inputs, (list, tuple)):
            raise ValueError(
                f"Layer '{self.name}' ({type(self).__name__}) must be called on a list of tensors, "
                f"received a single {type(inputs).__name__}."
            )
        count = len(inputs)
        if count < self._min_inputs or (self._max_inputs is not None and count > self._max_inputs):
            expected = (f"exactly {self._min_inputs}" if self._max_inputs == self._min_inputs
                        else f"at least {self._min_inputs}")
            raise ValueError(
                f"Layer '{self.name}' ({type(self).__name__}) expects {expected} input(s), received {count}."
            )
        for item in inputs:
            if not isinstance(item, Tensor):
                raise TypeError(
                    f"Layer '{self.name}' expects a list of tensors, received an element of type {type(item).__name__}."
                )

    def _check_shapes(self, shapes):
        """Elementwise merges: all shapes equal, up to axes of size 1."""
        rank = max(len(shape) for shape in shapes)
        for position in range(1, rank + 1):
            sizes = {shape[-position] for shape in shapes if len(shape) >= position} - {1}
            if len(sizes) > 1:
                raise ValueError(
                    f"Layer '{self.name}' ({type(self).__name__}) received inputs with incompatible shapes: "
                    f"{_shape_text(shapes)} (they must be equal, or 1 where they differ)."
                )

    def build(self, input_shape):
        if not isinstance(input_shape, (list, tuple)) or not all(isinstance(s, (list, tuple)) for s in input_shape):
            raise ValueError(
                f"Layer '{self.name}' ({type(self).__name__}) must be called on a list of tensors, "
                f"received input shape {input_shape!r}."
            )
        self.built = True

    def call(self, inputs):
        self._check_inputs(inputs)
        self._check_shapes([item.shape for item in inputs])
        output = inputs[0]
        for item in inputs[1:]:
            output = self._merge_pair(output, item)
        return self._finish(output, len(inputs))

    def _merge_pair(self, a, b):  # pragma: no cover - abstract
        raise NotImplementedError

    def _finish(self, output, count):
        return output

    def __call__(self, inputs, *args, **kwargs):
        # Fail before building (or probing symbolic inputs) on a non-list.
        if not isinstance(inputs, (list, tuple)) or not inputs:
            self._check_inputs(inputs)
        return super().__call__(inputs, *args, **kwargs)
