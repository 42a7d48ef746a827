"""The arguments of ``Layer.add_weight`` in Keras 3's order or tf.keras's, and weight names."""

_KERAS3_ADD_WEIGHT = ("shape", "initializer", "dtype", "trainable", "autocast", "regularizer", "constraint",
                      "aggregation", "overwrite_with_gradient", "name")
_TF_KERAS_ADD_WEIGHT = ("name", "shape", "dtype", "initializer", "regularizer", "trainable", "constraint")


def add_weight_arguments(args, kwargs, layer_class):
    """add_weight's arguments by name, for Keras 3's order or (a string
    first) tf.keras's ``(name, shape, dtype, initializer, ...)``."""
    order = _TF_KERAS_ADD_WEIGHT if args and isinstance(args[0], str) else _KERAS3_ADD_WEIGHT
    if len(args) > len(order):
        raise TypeError(f"{layer_class}.add_weight() takes at most {len(order)} positional arguments, "
                        f"received {len(args)}.")
    spec = dict(zip(order, args))
    for key, value in kwargs.items():
        if key in spec:
            raise TypeError(f"{layer_class}.add_weight() got multiple values for argument '{key}'.")
        if key not in _KERAS3_ADD_WEIGHT and key not in ("use_resource", "synchronization", "experimental_autocast"):
            raise TypeError(f"{layer_class}.add_weight() got an unexpected keyword argument '{key}'.")
        spec[key] = value
    for key in _KERAS3_ADD_WEIGHT:
        spec.setdefault(key, None)
    if spec["trainable"] is None:
        spec["trainable"] = True
    return spec


def unique_weight_name(layer, name):
    """``name``, or ``name_1``, ``name_2``... if ``layer`` already has it."""
    taken = {w.name for w in layer._trainable_weights + layer._non_trainable_weights}
    if f"{layer.name}/{name}" not in taken:
        return name
    index = 1
    while f"{layer.name}/{name}_{index}" in taken:
        index += 1
    return f"{name}_{index}"
