"""The argument and input handling MultiHeadAttention and
GroupedQueryAttention share: the dropout check, resolving key and the
inputs' own masks (Keras's defaults), and the checks that the inputs are
``(batch, steps, features)`` and keep the feature sizes the weights were
built for. ``class_name`` is the public layer's name, as the messages give it."""
import numbers

from minikeras.layers.keras_mask import get_keras_mask

__all__ = ["check_dropout", "resolve_inputs", "check_input_ranks", "check_feature_sizes"]


def check_dropout(class_name, dropout):
    """``dropout`` as a float in [0, 1), or a ValueError naming the layer."""
    if isinstance(dropout, bool) or not isinstance(dropout, numbers.Real) or not 0 <= dropout < 1:
        raise ValueError(f"{class_name}: dropout must be a number in [0, 1), received dropout={dropout!r}.")
    return float(dropout)


def resolve_inputs(layer, query, value, key, query_mask, value_mask, key_mask):
    """``(value, key, query_mask, value_mask, key_mask)``: key defaults to
    value, and a mask not given is the input's own (Embedding(mask_zero),
    Masking); key's own mask only counts when a distinct key was passed."""
    value = layer._convert_input(value)
    key_given = key is not None
    key = value if key is None else layer._convert_input(key)
    query_mask = get_keras_mask(query) if query_mask is None else query_mask
    value_mask = get_keras_mask(value) if value_mask is None else value_mask
    if key_mask is None and key_given and key is not value:
        key_mask = get_keras_mask(key)
    return value, key, query_mask, value_mask, key_mask


def check_input_ranks(layer, class_name, query, value, key):
    """A ValueError unless query, value and key are all rank 3."""
    for name, tensor in (("query", query), ("value", value), ("key", key)):
        if tensor.ndim != 3:
            raise ValueError(f"Layer '{layer.name}' ({class_name}) expects {name} of shape "
                             f"(batch, steps, features), received shape {tuple(tensor.shape)}.")


def check_feature_sizes(layer, class_name, built_sizes, query, value, key):
    """A ValueError unless (query, value, key)'s last sizes are those the weights were built for."""
    sizes = (query.shape[-1], value.shape[-1], key.shape[-1])
    if sizes != built_sizes:
        raise ValueError(f"Layer '{layer.name}' ({class_name}) was built for (query, value, key) feature "
                         f"sizes {built_sizes}, received {sizes}.")
