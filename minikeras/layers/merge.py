"""Merge layers: combine a list of tensors into one.

``Add``, ``Subtract``, ``Multiply``, ``Average``, ``Maximum`` and ``Minimum``
work elementwise on inputs of the same shape (axes of size 1 broadcast, as
in Keras); ``Concatenate`` joins along an axis; ``Dot`` takes per-sample dot
products. Each is called on a list: ``Add()([a, b])``.
"""
import numpy

from minikeras import ops
from minikeras.autograd import Tensor
from minikeras.layers.base import Layer

__all__ = ["Add", "Subtract", "Multiply", "Average", "Maximum", "Minimum", "Concatenate", "Dot",
           "add", "subtract", "multiply", "average", "maximum", "minimum", "concatenate", "dot"]


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


class Add(_Merge):
    """Elementwise sum of the inputs: ``Add()([a, b, c]) = a + b + c``."""

    def _merge_pair(self, a, b):
        return ops.add(a, b)


class Subtract(_Merge):
    """``Subtract()([a, b]) = a - b`` (exactly two inputs)."""

    _min_inputs = _max_inputs = 2

    def _merge_pair(self, a, b):
        return ops.subtract(a, b)


class Multiply(_Merge):
    """Elementwise product of the inputs."""

    def _merge_pair(self, a, b):
        return ops.multiply(a, b)


class Average(_Merge):
    """Elementwise mean of the inputs."""

    def _merge_pair(self, a, b):
        return ops.add(a, b)

    def _finish(self, output, count):
        return output * (1.0 / count) if count > 1 else output


class Maximum(_Merge):
    """Elementwise maximum of the inputs."""

    def _merge_pair(self, a, b):
        return ops.maximum(a, b)


class Minimum(_Merge):
    """Elementwise minimum of the inputs."""

    def _merge_pair(self, a, b):
        return ops.minimum(a, b)


class Concatenate(_Merge):
    """Join the inputs along ``axis`` (default -1, the features).

    Args:
        axis: the axis to join along; every other axis must match.
        **kwargs: base Layer arguments.
    """

    def __init__(self, axis=-1, **kwargs):
        super().__init__(**kwargs)
        if isinstance(axis, bool) or not isinstance(axis, (int, numpy.integer)):
            raise TypeError(f"Concatenate: axis must be an int, received axis={axis!r}.")
        self.axis = int(axis)

    def _check_shapes(self, shapes):
        rank = len(shapes[0])
        if any(len(shape) != rank for shape in shapes) or not -rank <= self.axis < rank:
            raise ValueError(
                f"Layer '{self.name}' (Concatenate, axis={self.axis}) needs inputs of the same rank with that "
                f"axis, received shapes {_shape_text(shapes)}."
            )
        axis = self.axis % rank
        for position in range(rank):
            if position != axis and len({shape[position] for shape in shapes}) > 1:
                raise ValueError(
                    f"Layer '{self.name}' (Concatenate, axis={self.axis}) needs inputs whose shapes match except "
                    f"on the concatenation axis, received shapes {_shape_text(shapes)}."
                )

    def call(self, inputs):
        self._check_inputs(inputs)
        self._check_shapes([item.shape for item in inputs])
        if len(inputs) == 1:
            return inputs[0]
        return ops.concatenate(list(inputs), axis=self.axis)

    def get_config(self):
        return {**super().get_config(), "axis": self.axis}


def _l2_normalize(x, axis):
    """``x / max(||x||, 1e-6)`` along ``axis`` (Keras' epsilon on the
    squared norm is 1e-12)."""
    squared = ops.sum(ops.square(x), axis=axis, keepdims=True)
    return x * ops.rsqrt(ops.maximum(squared, 1e-12))


class Dot(_Merge):
    """Per-sample dot products of two tensors along given axes (a batched
    contraction, like ``keras.layers.Dot``).

    For ``(batch, n)`` inputs and ``axes=1`` the output is ``(batch, 1)``;
    for ``(batch, m, d)`` and ``(batch, n, d)`` with ``axes=2`` it is
    ``(batch, m, n)``.

    Args:
        axes: an int (the same axis of both inputs) or a pair of ints;
            axis 0 (the batch) cannot be contracted.
        normalize: L2-normalise both inputs along the axes first, giving
            cosine similarities.
        **kwargs: base Layer arguments.
    """

    _min_inputs = _max_inputs = 2

    def __init__(self, axes, normalize=False, **kwargs):
        super().__init__(**kwargs)
        if isinstance(axes, (int, numpy.integer)) and not isinstance(axes, bool):
            axes = int(axes)
        elif isinstance(axes, (list, tuple)) and len(axes) == 2 and all(
                isinstance(a, (int, numpy.integer)) and not isinstance(a, bool) for a in axes):
            axes = [int(a) for a in axes]
        else:
            raise TypeError(f"Dot: axes must be an int or a pair of ints, received axes={axes!r}.")
        self.axes = axes
        self.normalize = bool(normalize)

    def _resolved_axes(self, shapes):
        pair = self.axes if isinstance(self.axes, list) else [self.axes, self.axes]
        resolved = []
        for axis, shape in zip(pair, shapes):
            if not -len(shape) <= axis < len(shape) or axis % len(shape) == 0:
                raise ValueError(
                    f"Layer '{self.name}' (Dot, axes={self.axes}) cannot contract axis {axis} of an input of shape "
                    f"{tuple(shape)} (axis 0 is the batch)."
                )
            resolved.append(axis % len(shape))
        return resolved

    def _check_shapes(self, shapes):
        if any(len(shape) < 2 for shape in shapes):
            raise ValueError(
                f"Layer '{self.name}' (Dot) needs inputs of rank >= 2, received shapes {_shape_text(shapes)}."
            )
        first, second = self._resolved_axes(shapes)
        if shapes[0][first] != shapes[1][second] or shapes[0][0] != shapes[1][0]:
            raise ValueError(
                f"Layer '{self.name}' (Dot, axes={self.axes}) received incompatible shapes {_shape_text(shapes)}: "
                f"axis {first} of the first ({shapes[0][first]}) must equal axis {second} of the second "
                f"({shapes[1][second]}), and the batch sizes must agree."
            )

    def call(self, inputs):
        self._check_inputs(inputs)
        shapes = [item.shape for item in inputs]
        self._check_shapes(shapes)
        first_axis, second_axis = self._resolved_axes(shapes)
        x1, x2 = inputs
        if self.normalize:
            x1, x2 = _l2_normalize(x1, first_axis), _l2_normalize(x2, second_axis)
        batch, depth = shapes[0][0], shapes[0][first_axis]
        rest1 = tuple(s for i, s in enumerate(shapes[0]) if i not in (0, first_axis))
        rest2 = tuple(s for i, s in enumerate(shapes[1]) if i not in (0, second_axis))
        # (batch, rest1, depth) @ (batch, depth, rest2) -> (batch, rest1, rest2)
        left = ops.reshape(ops.moveaxis(x1, first_axis, -1), (batch, -1, depth))
        right = ops.reshape(ops.moveaxis(x2, second_axis, 1), (batch, depth, -1))
        product = ops.matmul(left, right)
        out_shape = (batch,) + rest1 + rest2
        if len(out_shape) == 1:
            out_shape = (batch, 1)
        return ops.reshape(product, out_shape)

    def get_config(self):
        return {**super().get_config(), "axes": self.axes, "normalize": self.normalize}


# Functional forms, as keras.layers.add([a, b]) etc.
def add(inputs, **kwargs):
    """``Add(**kwargs)(inputs)``."""
    return Add(**kwargs)(inputs)


def subtract(inputs, **kwargs):
    """``Subtract(**kwargs)(inputs)``."""
    return Subtract(**kwargs)(inputs)


def multiply(inputs, **kwargs):
    """``Multiply(**kwargs)(inputs)``."""
    return Multiply(**kwargs)(inputs)


def average(inputs, **kwargs):
    """``Average(**kwargs)(inputs)``."""
    return Average(**kwargs)(inputs)


def maximum(inputs, **kwargs):
    """``Maximum(**kwargs)(inputs)``."""
    return Maximum(**kwargs)(inputs)


def minimum(inputs, **kwargs):
    """``Minimum(**kwargs)(inputs)``."""
    return Minimum(**kwargs)(inputs)


def concatenate(inputs, axis=-1, **kwargs):
    """``Concatenate(axis=axis, **kwargs)(inputs)``."""
    return Concatenate(axis=axis, **kwargs)(inputs)


def dot(inputs, axes, normalize=False, **kwargs):
    """``Dot(axes, normalize, **kwargs)(inputs)``."""
    return Dot(axes, normalize=normalize, **kwargs)(inputs)
