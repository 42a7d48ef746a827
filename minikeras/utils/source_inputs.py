"""``utils.get_source_inputs``: the ``Input`` tensors a symbolic tensor was computed from."""


def get_source_inputs(tensor):
    """The functional API's input tensors that ``tensor`` depends on, in the
    order the graph reaches them (each once).

    Args:
        tensor: a symbolic tensor (from ``Input`` or a layer called on one).

    Returns:
        A list of input tensors; ``[tensor]`` for an input tensor itself.

    Raises:
        TypeError: ``tensor`` is not a symbolic tensor.
    """
    from minikeras.layers.core.input_layer import InputLayer
    from minikeras.layers.input import KerasTensor

    if not isinstance(tensor, KerasTensor):
        raise TypeError(f"get_source_inputs expects a symbolic tensor (from keras.Input or a layer call), received "
                        f"{type(tensor).__name__}.")
    found, seen, stack = [], set(), [tensor]
    while stack:
        current = stack.pop()
        node = current.node
        if isinstance(node.layer, InputLayer):
            if id(current) not in seen:
                seen.add(id(current))
                found.append(current)
            continue
        stack.extend(reversed(node.parent_tensors))
    return found
