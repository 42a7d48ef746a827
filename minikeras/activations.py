"""Activation functions by Keras name, on Tensors through ``minikeras.ops``.

``get("relu")`` returns the function; layers take ``activation="relu"`` and
store ``serialize(fn)`` (the name) in their config. Each function looks its
op up when called, so this module imports no op at import time.

Example:
    >>> from minikeras import activations
    >>> activations.get("gelu")(x)
    >>> activations.serialize(activations.swish)
    'silu'
"""
from minikeras._support import object_registration

__all__ = [
    "linear", "relu", "relu6", "leaky_relu", "elu", "selu", "gelu", "sigmoid", "hard_sigmoid", "tanh",
    "softmax", "log_softmax", "softplus", "softsign", "silu", "swish", "hard_silu", "hard_swish",
    "log_sigmoid", "exponential", "mish", "get", "serialize", "deserialize",
]
__all__ += [
    "celu", "glu", "hard_shrink", "hard_tanh", "soft_shrink", "sparse_plus", "sparse_sigmoid", "sparsemax",
    "squareplus", "tanh_shrink", "threshold",
]


def _ops():
    from minikeras import ops

    return ops


def linear(x):
    """The identity: ``linear(x) = x`` (``activation=None`` in a layer)."""
    return x


def relu(x, negative_slope=0.0, max_value=None, threshold=0.0):
    """Rectified linear unit, with Keras' optional variants.

    Args:
        x: the input Tensor.
        negative_slope: slope below ``threshold`` (0 for the plain ReLU).
        max_value: clip the output at this value (None: no clip).
        threshold: values below it are zeroed (or sloped).

    Returns:
        ``max(x, 0)`` by default.
    """
    ops = _ops()
    if negative_slope == 0.0 and max_value is None and threshold == 0.0:
        return ops.relu(x)
    if negative_slope != 0.0 and max_value is None and threshold == 0.0:
        return ops.leaky_relu(x, negative_slope=negative_slope)
    negative_part = None
    if negative_slope != 0.0:
        negative_part = ops.relu(threshold - x) if threshold != 0.0 else ops.relu(-x)
    if threshold != 0.0:
        # x where x > threshold, else 0 (the mask is a constant: no gradient).
        mask = ops.cast(ops.greater(x, threshold), x.dtype)
        out = x * mask
    elif max_value == 6:
        out, max_value = ops.relu6(x), None
    else:
        out = ops.relu(x)
    if max_value is not None:
        out = ops.clip(out, 0.0, float(max_value))
    if negative_part is not None:
        out = out - negative_part * negative_slope
    return out


def relu6(x):
    """``min(max(x, 0), 6)``."""
    return _ops().relu6(x)


def leaky_relu(x, negative_slope=0.2):
    """``x`` for ``x > 0``, else ``negative_slope * x`` (Keras 3 default 0.2)."""
    return _ops().leaky_relu(x, negative_slope=negative_slope)


def elu(x, alpha=1.0):
    """``x`` for ``x > 0``, else ``alpha * (exp(x) - 1)``."""
    return _ops().elu(x, alpha=alpha)


def selu(x):
    """Scaled ELU (self-normalising; pair it with lecun_normal kernels)."""
    return _ops().selu(x)


def gelu(x, approximate=False):
    """Gaussian error linear unit; exact (erf) form by default, as
    ``keras.activations.gelu``."""
    return _ops().gelu(x, approximate=approximate)


def sigmoid(x):
    """``1 / (1 + exp(-x))``. Layers applying it keep the logits on the
    output (``minikeras.losses.logits``) for a stable binary crossentropy."""
    return _ops().sigmoid(x)


def hard_sigmoid(x):
    """``relu6(x + 3) / 6`` (Keras 3's piecewise-linear sigmoid)."""
    return _ops().hard_sigmoid(x)


def tanh(x):
    """Hyperbolic tangent."""
    return _ops().tanh(x)


def softmax(x, axis=-1):
    """``exp(x) / sum(exp(x))`` over ``axis``. Layers applying it keep the
    logits on the output (``minikeras.losses.logits``) for a stable crossentropy."""
    return _ops().softmax(x, axis=axis)


def log_softmax(x, axis=-1):
    """``x - logsumexp(x)`` over ``axis``."""
    return _ops().log_softmax(x, axis=axis)


def softplus(x):
    """``log(1 + exp(x))``, computed without overflow."""
    return _ops().softplus(x)


def softsign(x):
    """``x / (1 + |x|)``."""
    return _ops().softsign(x)


def silu(x):
    """``x * sigmoid(x)`` (also called swish)."""
    return _ops().silu(x)


swish = silu


def hard_silu(x):
    """``x * hard_sigmoid(x)`` (also called hard_swish)."""
    return _ops().hard_silu(x)


hard_swish = hard_silu


def log_sigmoid(x):
    """``log(sigmoid(x))``, stable for large ``|x|``."""
    return _ops().log_sigmoid(x)


def exponential(x):
    """``exp(x)``."""
    return _ops().exp(x)


def mish(x):
    """``x * tanh(softplus(x))`` (Misra, 2019)."""
    ops = _ops()
    return x * ops.tanh(ops.softplus(x))


from minikeras.activations_piecewise import (  # noqa: E402
    celu, glu, hard_shrink, hard_tanh, soft_shrink, sparse_plus, sparse_sigmoid, sparsemax, squareplus, tanh_shrink,
    threshold,
)

_FUNCTIONS = {
    fn.__name__: fn
    for fn in (linear, relu, relu6, leaky_relu, elu, selu, gelu, sigmoid, hard_sigmoid, tanh, softmax,
               log_softmax, softplus, softsign, silu, hard_silu, log_sigmoid, exponential, mish)
    + (celu, glu, hard_shrink, hard_tanh, soft_shrink, sparse_plus, sparse_sigmoid, sparsemax, squareplus,
       tanh_shrink, threshold)
}
_ALIASES = {"swish": silu, "hard_swish": hard_silu}
_KNOWN = {**_FUNCTIONS, **_ALIASES}

# Ops that are the same function as an activation serialise by that name.
_OP_NAMES = ("relu", "relu6", "leaky_relu", "elu", "selu", "gelu", "sigmoid", "hard_sigmoid", "tanh", "softmax",
             "log_softmax", "softplus", "softsign", "silu", "hard_silu", "log_sigmoid")
# The same names among the ops the Keras ops namespace adds (looked up lazily:
# absent ones are skipped).
_OP_NAMES += ("celu", "glu", "hard_shrink", "hard_tanh", "soft_shrink", "sparse_plus", "sparse_sigmoid", "sparsemax",
              "squareplus", "tanh_shrink", "threshold")


def _op_equivalents():
    ops = _ops()
    found = {}
    for name in _OP_NAMES:
        op = getattr(ops, name, None)
        if op is not None:
            found[op] = _FUNCTIONS[name]
    exp = getattr(ops, "exp", None)
    if exp is not None:
        found[exp] = exponential
    return found


def get(identifier):
    """The activation function for a name, a callable or None.

    Args:
        identifier: a Keras name ("relu", "softmax", "swish", ...), a
            callable (returned as is, except the ``minikeras.ops`` functions,
            which map to the activation of the same name), or None (linear).

    Returns:
        A function Tensor -> Tensor.

    Raises:
        ValueError: an unknown name (the message lists the known ones) or
            an identifier that is neither a name nor callable.
    """
    if identifier is None:
        return linear
    if isinstance(identifier, dict):
        identifier = identifier.get("config", identifier.get("class_name"))
        if isinstance(identifier, dict):
            identifier = identifier.get("name")
    if isinstance(identifier, str):
        found = _KNOWN.get(identifier) or _registered(identifier)
        if found is None:
            raise ValueError(f"Unknown activation '{identifier}'. Known activations: {sorted(_KNOWN)}; a function "
                             "of yours needs register_keras_serializable() or custom_objects.") from None
        return found
    if callable(identifier):
        return _op_equivalents().get(identifier, identifier)
    raise ValueError(
        f"Could not interpret activation {identifier!r}: expected a name such as 'relu', a callable or None."
    )


def _registered(name):
    """A user function known by ``name``: registered with
    ``register_keras_serializable`` (as ``name`` or ``"package>name"``), in
    ``get_custom_objects()``, or in an active ``custom_object_scope`` (which
    ``load_model`` opens with its ``custom_objects``); None otherwise."""
    found = object_registration.registered_objects().get(name)
    return found if callable(found) and not isinstance(found, type) else None


def serialize(activation):
    """The name of an activation function (``swish`` gives ``"silu"``).

    A user function serialises to its registered name (``"package>name"``)
    when it was registered with ``register_keras_serializable``, as Keras
    writes it, else to its ``__name__``; load that back with
    ``custom_objects={name: fn}``.
    """
    activation = get(activation)
    for name, fn in _FUNCTIONS.items():
        if fn is activation:
            return name
    name = getattr(activation, "__name__", None)
    if name is None:
        raise ValueError(f"Cannot serialize activation {activation!r}: it has no name.")
    return object_registration.registered_name(activation) or name


def deserialize(name, custom_objects=None):
    """The activation for ``name`` (``custom_objects`` may supply user ones)."""
    if custom_objects and isinstance(name, str) and name in custom_objects:
        return custom_objects[name]
    return get(name)

