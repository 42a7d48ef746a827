"""Variables the optimizer overwrites with their gradient (Keras 3's
``Variable.overwrite_with_gradient``).

A float8 layer's scales and amax histories are trainable, but their
"gradient" is their next value, computed by the backward pass
(ops/nn/float8.py): the optimizer assigns it and leaves them out of
everything else (no slots, no clipping, no weight decay, no learning
rate), as Keras's ``_overwrite_variables_directly_with_gradients``. With
``gradient_accumulation_steps``, the largest value of the accumulated steps
is assigned at each update step (Keras's ``maximum`` rule).
"""
import functools

__all__ = ["is_overwritten", "without_overwritten", "building_without_overwritten", "apply_overwrites"]


def is_overwritten(variable):
    """Whether the optimizer assigns ``variable`` its gradient."""
    return bool(getattr(variable, "overwrite_with_gradient", False))


def without_overwritten(variables):
    """``variables`` less those the optimizer overwrites (they get no slots)."""
    return [variable for variable in variables if not getattr(variable, "overwrite_with_gradient", False)]


def building_without_overwritten(build):
    """An optimizer class's own ``build`` given only the variables it updates."""

    @functools.wraps(build)
    def build_updated(self, variables):
        return build(self, without_overwritten(list(variables)))

    build_updated._skips_overwritten = True
    return build_updated


def apply_overwrites(optimizer, grads, variables):
    """Assign each overwritten variable its gradient; return the other pairs.

    Args:
        optimizer: the optimizer (its step count and accumulation setting).
        grads, variables: the non-empty gradients and their variables.

    Returns:
        ``(grads, variables)`` of the variables the optimizer updates.
    """
    kept_grads, kept_variables = [], []
    steps = optimizer.gradient_accumulation_steps
    for grad, variable in zip(grads, variables):
        if not getattr(variable, "overwrite_with_gradient", False):  # is_overwritten, inline: every variable, every step
            kept_grads.append(grad)
            kept_variables.append(variable)
            continue
        value = getattr(grad, "data", grad)
        with variable.device.activate():
            value = variable.device.asarray(value).astype(variable.dtype, copy=False)
            if steps:
                maxima = optimizer.__dict__.setdefault("_overwrite_maxima", {})
                previous = maxima.get(id(variable))
                value = value if previous is None else variable.device.xp.maximum(value, previous)
                if (optimizer._iterations + 1) % steps:
                    maxima[id(variable)] = value
                    continue
                maxima.pop(id(variable), None)
            variable.assign(value)
    return kept_grads, kept_variables
