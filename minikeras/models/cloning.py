"""``models.clone_model``: the same architecture with new layers, as Keras's.

The clone has fresh weights (as in Keras: copy them with
``clone.set_weights(model.get_weights())``). Each layer is remade by
``clone_function`` (by default ``cls.from_config(layer.get_config())``); a
layer shared by several calls is cloned once and shared again. A functional
model's graph is replayed node by node on new inputs (or on
``input_tensors``); a Sequential model is rebuilt layer by layer; any other
model is remade from its own config.
"""
from minikeras.layers.core.input_layer import Input, InputLayer
from minikeras.layers.input import KerasTensor
from minikeras.models.functional import Functional
from minikeras.models.model import Model
from minikeras.models.sequential import Sequential
from minikeras._support.nest import flatten, map_structure


def _default_clone(layer):
    return type(layer).from_config(layer.get_config())


def clone_model(model, input_tensors=None, clone_function=None, call_function=None, recursive=False, **kwargs):
    """Clone a Sequential, functional or subclassed model (new weights).

    Args:
        model: the model to clone.
        input_tensors: symbolic inputs (from ``Input``) to build the clone
            on, instead of new ones of the same shapes.
        clone_function: ``layer -> new layer``; default
            ``cls.from_config(layer.get_config())``.
        call_function: ``(layer, *args, **kwargs) -> outputs``, called in
            place of ``layer(*args, **kwargs)`` when a functional graph is
            replayed (to insert layers, for instance).
        recursive: clone nested Sequential/functional models with the same
            arguments (otherwise ``clone_function`` sees them as layers).

    Returns:
        A new model.

    Raises:
        ValueError: ``input_tensors``, ``clone_function`` or ``call_function``
            given for a subclassed model (Keras refuses them too).
    """
    if kwargs:
        raise TypeError(f"clone_model got unexpected keyword arguments {sorted(kwargs)}.")
    if not isinstance(model, Model):
        raise TypeError(f"clone_model expects a Model, received {type(model).__name__}.")
    clone_function = clone_function or _default_clone
    if not callable(clone_function):
        raise TypeError(f"clone_function must be callable, received {clone_function!r}.")

    def clone_layer(layer):
        if recursive and isinstance(layer, (Sequential, Functional)):
            return clone_model(layer, clone_function=clone_function, call_function=call_function, recursive=True)
        return clone_function(layer)

    if isinstance(model, Sequential):
        return _clone_sequential(model, input_tensors, clone_layer)
    if isinstance(model, Functional):
        return _clone_functional(model, input_tensors, clone_layer, call_function)
    if input_tensors is not None or clone_function is not _default_clone or call_function is not None:
        raise ValueError(f"clone_model of the subclassed model '{model.name}' ({type(model).__name__}) takes no "
                         "input_tensors, clone_function or call_function: it is remade from get_config(). Clone a "
                         "Sequential or functional model to use them.")
    return type(model).from_config(model.get_config())


def _clone_sequential(model, input_tensors, clone_layer):
    layers = [clone_layer(layer) for layer in model.layers]
    clone = Sequential(name=model.name)
    if input_tensors is not None:
        given = flatten(input_tensors)
        if len(given) != 1 or not isinstance(given[0], KerasTensor):
            raise ValueError(f"clone_model of the Sequential model '{model.name}' takes one symbolic input "
                             f"tensor as input_tensors, received {input_tensors!r}.")
        clone.add(given[0])
    elif model.inputs:
        clone.add(Input(batch_shape=tuple(model.inputs[0].shape), dtype=model.inputs[0].dtype))
    for layer in layers:
        clone.add(layer)
    return clone


def _clone_functional(model, input_tensors, clone_layer, call_function):
    if input_tensors is None:
        new_inputs = [Input(batch_shape=tuple(t.shape), dtype=t.dtype, name=t.node.layer.name) for t in model.inputs]
    else:
        new_inputs = flatten(input_tensors)
        if len(new_inputs) != len(model.inputs) or not all(isinstance(t, KerasTensor) for t in new_inputs):
            raise ValueError(f"clone_model of '{model.name}' needs {len(model.inputs)} symbolic input tensor(s) "
                             f"(from Input) as input_tensors, received {input_tensors!r}.")
    values = {id(old): new for old, new in zip(model.inputs, new_inputs)}
    clones = {}

    def lookup(item):
        return values[id(item)] if isinstance(item, KerasTensor) else item

    for node in model._nodes:
        if isinstance(node.layer, InputLayer):
            continue
        if id(node.layer) not in clones:
            clones[id(node.layer)] = clone_layer(node.layer)
        layer = clones[id(node.layer)]
        args = [map_structure(lookup, arg) for arg in node.args]
        kwargs = {key: map_structure(lookup, value) for key, value in node.kwargs.items()}
        inputs = map_structure(lookup, node.inputs)
        result = call_function(layer, inputs, *args, **kwargs) if call_function else layer(inputs, *args, **kwargs)
        for old, new in zip(flatten(node.outputs), flatten(result)):
            values[id(old)] = new
    inputs = new_inputs if isinstance(model._inputs_structure, (list, tuple)) or len(new_inputs) > 1 \
        else new_inputs[0]
    if isinstance(model._inputs_structure, dict):
        inputs = {key: values[id(tensor)] for key, tensor in model._inputs_structure.items()}
    return Functional(inputs, map_structure(lookup, model._outputs_structure), name=model.name)
