"""Mixed precision (``keras.mixed_precision``): compute in float16 or
bfloat16, keep variables in float32.

    >>> import minikeras as mk
    >>> mk.mixed_precision.set_global_policy("mixed_float16")   # doctest: +SKIP

Layers made afterwards compute in float16 with float32 weights;
``compile()`` then wraps the optimizer in a :class:`LossScaleOptimizer`. End
a classifier with ``layers.Activation("softmax", dtype="float32")`` so the
probabilities (and the loss) are computed in float32. These are Keras 3's
legacy names for ``minikeras.dtype_policies`` and
``minikeras.config.set_dtype_policy``.
"""
from minikeras.dtype_policies.dtype_policy import DTypePolicy, dtype_policy, set_dtype_policy

Policy = DTypePolicy
global_policy = dtype_policy
set_global_policy = set_dtype_policy

__all__ = ["DTypePolicy", "Policy", "dtype_policy", "global_policy", "set_dtype_policy", "set_global_policy",
           "LossScaleOptimizer"]


def __getattr__(name):
    # The optimizer loads with minikeras.optimizers, on first use.
    if name == "LossScaleOptimizer":
        from minikeras.optimizers.loss_scale_optimizer import LossScaleOptimizer

        return LossScaleOptimizer
    raise AttributeError(f"module 'minikeras.mixed_precision' has no attribute {name!r}")
