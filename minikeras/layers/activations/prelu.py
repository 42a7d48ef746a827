"""keras.layers.PReLU: a leaky ReLU with a learned slope."""
from minikeras import constraints, initializers, ops, regularizers
from minikeras.layers.activations.elementwise_activation import _ElementwiseActivation
from minikeras.layers.core.dense import _float_input
from minikeras.layers.input_spec import InputSpec

__all__ = ["PReLU"]


class PReLU(_ElementwiseActivation):
    """Leaky ReLU with a learned slope: ``relu(x) - alpha * relu(-x)``.

    Args:
        alpha_initializer: the slopes' initializer, "zeros" by default.
        alpha_regularizer, alpha_constraint: optional, for ``alpha``.
        shared_axes: axes (1-based, batch excluded) that share one slope,
            e.g. ``[1, 2]`` for one slope per channel of an image.
        **kwargs: base Layer arguments.

    The weight ``alpha`` has the input's shape without the batch axis, with
    size 1 on the shared axes (as Keras).
    """

    def __init__(self, alpha_initializer="zeros", alpha_regularizer=None, alpha_constraint=None,
                 shared_axes=None, **kwargs):
        super().__init__(**kwargs)
        self.alpha_initializer = initializers.get(alpha_initializer)
        self.alpha_regularizer = regularizers.get(alpha_regularizer)
        self.alpha_constraint = constraints.get(alpha_constraint)
        if shared_axes is None:
            self.shared_axes = None
        else:
            axes = list(shared_axes) if isinstance(shared_axes, (list, tuple)) else [shared_axes]
            if any(isinstance(a, bool) or not isinstance(a, int) or a < 1 for a in axes):
                raise ValueError(f"PReLU: shared_axes must be positive ints (axis 0 is the batch), "
                                 f"received shared_axes={shared_axes!r}.")
            self.shared_axes = axes
        self.alpha = None

    def build(self, input_shape):
        rank = len(input_shape)
        alpha_shape = list(input_shape[1:])
        for axis in self.shared_axes or []:
            if axis >= rank:
                raise ValueError(f"Layer '{self.name}' (PReLU): shared axis {axis} does not exist in inputs of "
                                 f"shape {tuple(input_shape)}.")
            alpha_shape[axis - 1] = 1
        if any(size is None for size in alpha_shape):
            raise ValueError(f"Layer '{self.name}' (PReLU): every non-shared axis must have a known size, "
                             f"received input shape {tuple(input_shape)}.")
        self.alpha = self.add_weight("alpha", alpha_shape, initializer=self.alpha_initializer,
                                     regularizer=self.alpha_regularizer, constraint=self.alpha_constraint)
        shared = set(self.shared_axes or [])
        self.input_spec = InputSpec(ndim=rank, axes={axis: input_shape[axis] for axis in range(1, rank)
                                                     if axis not in shared})
        self.built = True

    def call(self, inputs):
        inputs = _float_input(self, inputs)
        return ops.relu(inputs) - self.alpha * ops.relu(-inputs)

    def get_config(self):
        return {
            **super().get_config(),
            "alpha_initializer": initializers.serialize(self.alpha_initializer),
            "alpha_regularizer": regularizers.serialize(self.alpha_regularizer),
            "alpha_constraint": constraints.serialize(self.alpha_constraint),
            "shared_axes": self.shared_axes,
        }
