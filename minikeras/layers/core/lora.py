"""Low-rank adaptation (LoRA, Hu et al. 2021) of a layer's kernel, as Keras 3's
Dense and EinsumDense do it.

``enable_lora(rank)`` freezes the kernel and adds two float32 weights,
``lora_kernel_a`` (kernel.shape[:-1] + (rank,), he_uniform) and
``lora_kernel_b`` ((rank, kernel.shape[-1]), zeros); the layer then computes
with ``kernel + (lora_alpha / rank) * lora_kernel_a @ lora_kernel_b``, which
is exactly the frozen kernel until training moves ``b``. The ``kernel``
attribute is that merged Tensor (the stored one is ``_kernel``), so the
layer's call is unchanged.

Files hold what Keras's hold: the merged kernel in the kernel's place and
no LoRA weights (Keras's ``save_own_variables``); loading into a layer
with LoRA enabled sets the frozen kernel and zeroes the adapters. The
saving code asks a layer for ``_keras_saved_weights()`` to learn this.
"""
from minikeras import initializers, ops
from minikeras.layers.weight_info import weight_info

__all__ = ["LoraMixin"]


class _MergedKernel:
    """The kernel as Keras files store it when LoRA is on: reads give the merged
    kernel, ``assign`` sets the frozen kernel and zeroes the adapters."""

    def __init__(self, layer):
        self.layer = layer
        self.name, self.shape, self.dtype = layer._kernel.name, layer._kernel.shape, layer._kernel.dtype

    @property
    def data(self):
        return ops.cast(self.layer.kernel, self.dtype).detach().data

    def numpy(self):
        return self.layer.kernel.numpy().astype(self.dtype)

    def assign(self, value):
        layer = self.layer
        layer._kernel.assign(value)
        layer.lora_kernel_a.assign(ops.zeros(layer.lora_kernel_a.shape, dtype=layer.lora_kernel_a.dtype))
        layer.lora_kernel_b.assign(ops.zeros(layer.lora_kernel_b.shape, dtype=layer.lora_kernel_b.dtype))


class LoraMixin:
    """``kernel`` as a property, ``enable_lora`` and the saved-weights hook.

    The layer sets ``lora_rank``/``lora_alpha`` in ``__init__`` (through
    :meth:`_init_lora`) and calls :meth:`_build_lora` at the end of build.
    """

    lora_enabled = False
    _kernel = None

    def _init_lora(self, lora_rank, lora_alpha):
        name = type(self).__name__
        for argument, value in (("lora_rank", lora_rank), ("lora_alpha", lora_alpha)):
            if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0):
                raise ValueError(f"{name}: {argument} must be a positive number or None, received {value!r}.")
        self.lora_rank = lora_rank
        self.lora_alpha = lora_alpha if lora_alpha is not None else lora_rank
        self.lora_enabled = False

    @property
    def kernel(self):
        """The kernel the layer computes with: the stored one, plus the
        scaled low-rank update when LoRA is enabled."""
        if not self.lora_enabled:
            return self._kernel
        update = ops.matmul(self.lora_kernel_a, self.lora_kernel_b) * (self.lora_alpha / self.lora_rank)
        return self._kernel + ops.cast(update, self._kernel.dtype)

    @kernel.setter
    def kernel(self, value):
        self._kernel = value

    #: Keras's Dense enables LoRA at build with the rank alone, so its lora_alpha
    #: becomes lora_rank then (a scale of 1); EinsumDense keeps the given alpha.
    _build_keeps_lora_alpha = True

    def _build_lora(self):
        if self.lora_rank:
            self.enable_lora(self.lora_rank, lora_alpha=self.lora_alpha if self._build_keeps_lora_alpha else None)

    def enable_lora(self, rank, lora_alpha=None, a_initializer="he_uniform", b_initializer="zeros"):
        """Freeze the kernel and train a rank-``rank`` update of it instead.

        Args:
            rank: the adapters' inner size.
            lora_alpha: the update's scale is ``lora_alpha / rank`` (default
                ``rank``: a scale of 1).
            a_initializer, b_initializer: of ``lora_kernel_a`` and
                ``lora_kernel_b`` (default he_uniform and zeros, so the
                layer's output is unchanged when LoRA starts).

        Raises:
            ValueError: a kernel constraint, an unbuilt layer, LoRA already
                enabled, or a rank that is not a positive int.
        """
        if self.kernel_constraint:
            raise ValueError("Lora is incompatible with kernel constraints. In order to enable lora on this layer, "
                             "remove the `kernel_constraint` argument.")
        if not self.built:
            raise ValueError("Cannot enable lora on a layer that isn't yet built.")
        if self.lora_enabled:
            raise ValueError("lora is already enabled. This can only be done once per layer.")
        if isinstance(rank, bool) or not isinstance(rank, int) or rank <= 0:
            raise ValueError(f"{type(self).__name__}.enable_lora: rank must be a positive int, received {rank!r}.")
        shape = tuple(self._kernel.shape)
        # float32 adapters, whatever the kernel's dtype (as Keras: no under/overflow while fine-tuning).
        self.lora_kernel_a = self.add_weight(name="lora_kernel_a", shape=shape[:-1] + (rank,),
                                             initializer=initializers.get(a_initializer), dtype="float32",
                                             regularizer=self.kernel_regularizer)
        self.lora_kernel_b = self.add_weight(name="lora_kernel_b", shape=(rank, shape[-1]),
                                             initializer=initializers.get(b_initializer), dtype="float32",
                                             regularizer=self.kernel_regularizer)
        self._freeze(self._kernel)
        self.lora_enabled = True
        self.lora_rank = rank
        self.lora_alpha = lora_alpha if lora_alpha is not None else rank

    def _freeze(self, weight):
        weight.trainable = False
        info = weight_info(weight)
        if info is not None:
            info.trainable = False
        if any(w is weight for w in self._trainable_weights):
            self._trainable_weights = [w for w in self._trainable_weights if w is not weight]
            self._non_trainable_weights.append(weight)

    def _keras_saved_weights(self):
        """The weights as Keras's files list them (see the module docstring)."""
        own = list(self._trainable_weights) + list(self._non_trainable_weights)
        if not self.lora_enabled:
            return own
        adapters = (self.lora_kernel_a, self.lora_kernel_b)
        rest = [w for w in own if w is not self._kernel and not any(w is a for a in adapters)]
        return [_MergedKernel(self)] + sorted(rest, key=_order)

    def _lora_config(self):
        return {"lora_rank": self.lora_rank, "lora_alpha": self.lora_alpha} if self.lora_rank else {}


def _order(weight):
    info = weight_info(weight)
    return info.order if info is not None else 0
