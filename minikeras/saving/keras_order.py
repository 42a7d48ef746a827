"""The order Keras 3 gives a functional model's layers.

Keras sorts a functional model's layers by depth (inputs first), ties
broken by the order a depth-first walk from the outputs meets them. Files
depend on that order: ``.weights.h5`` names layers by class with a counter
(``dense``, ``dense_1``) and tf.keras's ``.h5`` matches layers by position,
so minikeras writes (and reads) in the same order; optimizer slots follow
Keras's order of trainable variables too. minikeras's own ``model.layers``
keeps its creation-based order.
"""
from minikeras._support.nest import flatten


def keras_layer_order(model):
    """``model.layers`` in Keras 3's order (unchanged for models that are not functional)."""
    from minikeras.layers.core.input_layer import InputLayer
    from minikeras.models.functional import Functional

    if not isinstance(model, Functional):
        return list(model.layers)
    inputs = [tensor for tensor in flatten(model._inputs_structure)]
    finished, ordered, first_seen = set(), [], {}

    def visit(tensor):
        node = getattr(tensor, "node", None)
        if node is None or id(node) in finished:
            return
        if not isinstance(node.layer, InputLayer) and any(tensor is other for other in inputs):
            finished.add(id(node))
            return
        first_seen.setdefault(id(node.layer), len(first_seen))
        for parent in node.parent_tensors:
            visit(parent)
        finished.add(id(node))
        ordered.append(node)

    for output in flatten(model._outputs_structure):
        visit(output)
    in_graph = {id(node) for node in ordered}
    node_depths, layer_depths, layers = {}, {}, {}
    for node in reversed(ordered):
        depth = max(node_depths.setdefault(id(node), 0), layer_depths.get(id(node.layer), 0))
        layer_depths[id(node.layer)] = depth
        layers[id(node.layer)] = node.layer
        node_depths[id(node)] = depth
        for parent in node.parent_tensors:
            if id(parent.node) in in_graph:
                node_depths[id(parent.node)] = max(depth + 1, node_depths.get(id(parent.node), 0))
    for tensor in inputs:  # inputs not connected to any output
        if id(tensor.node.layer) not in layer_depths:
            layer_depths[id(tensor.node.layer)] = 0
            first_seen[id(tensor.node.layer)] = -1
            layers[id(tensor.node.layer)] = tensor.node.layer
    keys = sorted(layers, key=lambda key: (-layer_depths[key], first_seen[key]))
    return [layers[key] for key in keys]


def keras_trainable_order(model):
    """The model's trainable weights in Keras 3's ``model.trainable_variables`` order
    (layer by layer in :func:`keras_layer_order`): the order of its optimizer slots."""
    weights = list(model._trainable_weights) if model.trainable else []
    for layer in keras_layer_order(model):
        for weight in layer.trainable_weights:
            if not any(weight is seen for seen in weights):
                weights.append(weight)
    return weights


def state_in_order(optimizer, variables):
    """``optimizer.get_state()`` as if it had been built on ``variables``, in that order.

    Slots are matched by name (each is named after its variable), through a
    twin optimizer built on ``variables``; when the names do not line up the
    state is returned as it is.
    """
    state = optimizer.get_state()
    built_on = getattr(optimizer, "_trainable_variables", None) or []
    if not optimizer.built or [id(v) for v in built_on] == [id(v) for v in variables]:
        return state
    twin = type(optimizer).from_config(optimizer.get_config())
    twin.build(variables)
    saved = dict(zip(optimizer.state_names(), state))
    names = twin.state_names()
    if len(names) != len(state) or set(names) != set(saved):
        return state
    return [saved[name] for name in names]


def state_from_order(optimizer, variables, state):
    """The inverse of :func:`state_in_order`: a state saved in ``variables``' order, rearranged
    for ``optimizer`` when it is already built on another order (e.g. by training)."""
    built_on = getattr(optimizer, "_trainable_variables", None) or []
    if not optimizer.built or [id(v) for v in built_on] == [id(v) for v in variables]:
        return state
    twin = type(optimizer).from_config(optimizer.get_config())
    twin.build(variables)
    names = twin.state_names()
    if len(names) != len(state):
        return state  # set_state reports the mismatch
    saved = dict(zip(names, state))
    wanted = optimizer.state_names()
    return [saved[name] for name in wanted] if set(wanted) == set(saved) else state
