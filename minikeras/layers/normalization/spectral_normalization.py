"""keras.layers.SpectralNormalization (Miyato et al., 2018), which divides a layer's kernel
by its largest singular value during training, estimated by power iteration.
"""
from minikeras import initializers
from minikeras.layers.core.wrapper import Wrapper
from minikeras.layers.input_spec import InputSpec

__all__ = ["SpectralNormalization"]


def _unit(xp, vector):
    """Keras's L2 normalisation of a whole array: ``x * min(rsqrt(sum(x^2)), 1e7)``."""
    return vector * xp.minimum(1.0 / xp.sqrt((vector * vector).sum()), 1e7)


class SpectralNormalization(Wrapper):
    """Constrain the spectral norm of the wrapped layer's ``kernel`` (or
    ``embeddings``) to 1: in every training call, ``power_iterations`` steps
    of power iteration refine the top singular vector ``vector_u`` (a
    non-trainable weight) and the kernel is replaced by ``kernel / sigma``
    before the layer runs, as Keras does (no gradient through ``sigma``).

    Args:
        layer: a layer with a ``kernel`` or ``embeddings`` weight.
        power_iterations: the iterations per training call (> 0, default 1).
        **kwargs: base Layer arguments.
    """

    def __init__(self, layer, power_iterations=1, **kwargs):
        super().__init__(layer, **kwargs)
        if power_iterations <= 0:
            raise ValueError(f"`power_iterations` should be greater than zero. Received: "
                             f"`power_iterations={power_iterations}`")
        self.power_iterations = power_iterations

    def build(self, input_shape):
        super().build(input_shape)
        self.input_spec = InputSpec(min_ndim=1, axes={-1: input_shape[-1]})
        kernel = getattr(self.layer, "kernel", None)
        if kernel is None:
            kernel = getattr(self.layer, "embeddings", None)
        if kernel is None:
            raise ValueError(f"{type(self.layer).__name__} object has no attribute 'kernel' nor 'embeddings'")
        # Keras tracks the kernel as the wrapper's own weight too (``self.kernel =
        # layer.kernel``), so its weight list is kernel, vector_u, then the rest
        # of the wrapped layer's: the same order here, for set_weights and files.
        self.kernel = kernel
        if kernel.trainable and not any(kernel is w for w in self._trainable_weights):
            self._trainable_weights.append(kernel)
        self.vector_u = self.add_weight(name="vector_u", shape=(1, kernel.shape[-1]),
                                        initializer=initializers.TruncatedNormal(stddev=0.02), trainable=False)

    def call(self, inputs, training=False):
        if training:
            self._normalize_kernel()
        return self.layer(inputs)

    def _normalize_kernel(self):
        kernel = self.kernel
        device = kernel.device
        xp = device.xp
        with device.activate():
            weights = kernel.data.reshape(-1, kernel.shape[-1])
            if not weights.any():  # an all-zero kernel has no direction to normalize
                return
            vector_u = self.vector_u.data.astype(weights.dtype)
            for _ in range(self.power_iterations):
                vector_v = _unit(xp, vector_u @ weights.T)
                vector_u = _unit(xp, vector_v @ weights)
            sigma = (vector_v @ weights) @ vector_u.T
            self.vector_u.data[...] = vector_u
            kernel.data[...] = (weights / sigma).reshape(kernel.shape)

    def compute_output_shape(self, input_shape):
        return self.layer.compute_output_shape(input_shape)

    def get_config(self):
        return {**super().get_config(), "power_iterations": self.power_iterations}
