"""Functional models: a graph of layer calls from Inputs to outputs."""
import numpy

from minikeras import ops
from minikeras.autograd import Tensor
from minikeras.layers.base import get_layer_class, layer_from_config
from minikeras._support.nest import flatten as _flatten
from minikeras._support.nest import map_structure as _map
from minikeras.layers.core.input_layer import InputLayer
from minikeras.layers.input import KerasTensor
from minikeras.models.model import Model


def _topological_nodes(outputs):
    """Nodes from the inputs to ``outputs``, each after the nodes it reads."""
    order, visited = [], set()
    stack = [(t.node, False) for t in reversed(_flatten(outputs))]
    while stack:
        node, expanded = stack.pop()
        if expanded:
            if id(node) not in visited:
                visited.add(id(node))
                order.append(node)
            continue
        if id(node) in visited:
            continue
        stack.append((node, True))
        for parent in reversed(node.parent_tensors):
            if id(parent.node) not in visited:
                stack.append((parent.node, False))
    return order


class Functional(Model):
    """``Model(inputs, outputs)``: runs the recorded layer calls in order.

    Args:
        inputs: a KerasTensor from ``Input``, or a list/dict of them.
        outputs: KerasTensor(s) computed from them.
    """

    _casts_inputs = False  # each layer casts its own inputs to its compute dtype (Keras's Functional)

    def __init__(self, inputs, outputs, name=None, trainable=True, **kwargs):
        super().__init__(name=name, trainable=trainable, **kwargs)
        for tensor in _flatten(inputs) + _flatten(outputs):
            if not isinstance(tensor, KerasTensor):
                raise TypeError(
                    f"Model(inputs, outputs) expects symbolic tensors from minikeras.Input and layer calls, "
                    f"received {type(tensor).__name__}."
                )
        self._inputs_structure = inputs
        self._outputs_structure = outputs
        self.inputs = _flatten(inputs)
        self.outputs = _flatten(outputs)
        self._nodes = _topological_nodes(outputs)
        for tensor in self.inputs:
            if not isinstance(tensor.node.layer, InputLayer):
                raise ValueError(f"Model inputs must come from minikeras.Input(), received {tensor}.")
        reachable_inputs = {id(node) for node in self._nodes if isinstance(node.layer, InputLayer)}
        for node in self._nodes:
            if isinstance(node.layer, InputLayer) and not any(node is t.node for t in self.inputs):
                raise ValueError(
                    f"Output depends on input '{node.layer.name}', which is not in the model's inputs."
                )
        del reachable_inputs
        self._layers = []
        for node in self._nodes:
            if not any(node.layer is layer for layer in self._layers):
                self._layers.append(node.layer)
        self.built = True

    @property
    def layers(self):
        """The model's layers; arithmetic on its symbolic tensors (``x + y``)
        is a node of the graph but, as Keras's operations, not a layer."""
        return [layer for layer in self._layers if not getattr(layer, "_is_operation", False)]

    def _sublayers(self):
        return [layer for layer in self._layers if not isinstance(layer, InputLayer)]

    @property
    def input(self):
        """The model's inputs as it was built with them (one KerasTensor, a
        list or a dict), as Keras's ``model.input``."""
        return self._inputs_structure

    @property
    def output(self):
        """The model's outputs as it was built with them, as Keras's ``model.output``."""
        return self._outputs_structure

    @property
    def input_shape(self):
        shapes = [t.shape for t in self.inputs]
        return shapes[0] if len(shapes) == 1 else shapes

    @property
    def output_shape(self):
        shapes = [t.shape for t in self.outputs]
        return shapes[0] if len(shapes) == 1 else shapes

    def call(self, inputs, training=None):
        values = {}
        given = self._match_inputs(inputs)
        for tensor, value in zip(self.inputs, given):
            values[id(tensor)] = value

        def lookup(item):
            return values[id(item)] if isinstance(item, KerasTensor) else item

        for node in self._nodes:
            if isinstance(node.layer, InputLayer):
                continue
            args = [_map(lookup, arg) for arg in node.args]
            kwargs = {key: _map(lookup, value) for key, value in node.kwargs.items()}
            kwargs.setdefault("training", training)
            result = node.layer(_map(lookup, node.inputs), *args, **kwargs)
            for tensor, value in zip(_flatten(node.outputs), _flatten(result)):
                values[id(tensor)] = value
        return _map(lookup, self._outputs_structure)

    def _match_inputs(self, inputs):
        if isinstance(inputs, dict) and isinstance(self._inputs_structure, dict) and \
                set(inputs) == set(self._inputs_structure):
            given = [inputs[key] for key in sorted(self._inputs_structure)]  # Model({"key": Input(...)}, ...)
        elif isinstance(inputs, dict):
            names = [t.node.layer.name for t in self.inputs]
            missing = [name for name in names if name not in inputs]
            if missing:
                raise ValueError(f"Model '{self.name}' expects inputs named {names}; missing {missing}.")
            given = [inputs[name] for name in names]
        else:
            given = _flatten(inputs) if isinstance(inputs, (list, tuple)) else [inputs]
            if len(given) != len(self.inputs):
                raise ValueError(
                    f"Model '{self.name}' expects {len(self.inputs)} input(s), received {len(given)}."
                )
        return [standardize_input_rank(value, tensor.shape, f"Input '{tensor.node.layer.name}' of model "
                                       f"'{self.name}' expects shape {{expected}}, received {{received}}.")
                for tensor, value in zip(self.inputs, given)]

    def _build_from(self, inputs):
        self.built = True

    def get_config(self):
        """Layers, their connections, and the model's inputs and outputs."""
        layer_configs = []
        for layer in self._layers:
            inbound = []
            for node in layer._inbound_nodes:
                if isinstance(layer, InputLayer) or not any(node is n for n in self._nodes):
                    continue
                inbound.append({
                    "inputs": _map(self._tensor_ref, node.inputs),
                    "args": [_map(self._tensor_ref, arg) for arg in node.args],
                    "kwargs": {k: _map(self._tensor_ref, v) for k, v in node.kwargs.items()},
                })
            layer_configs.append({
                "class_name": type(layer).__name__,
                "name": layer.name,
                "config": layer.get_config(),
                "inbound_nodes": inbound,
            })
        return {
            "name": self.name,
            "trainable": self.trainable,
            "layers": layer_configs,
            "input_layers": _map(self._tensor_ref, self._inputs_structure),
            "output_layers": _map(self._tensor_ref, self._outputs_structure),
        }

    def _tensor_ref(self, tensor):
        if not isinstance(tensor, KerasTensor):
            return tensor
        layer = tensor.node.layer
        model_nodes = [node for node in layer._inbound_nodes if any(node is n for n in self._nodes)]
        node_index = next(i for i, node in enumerate(model_nodes) if node is tensor.node)
        return {"__keras_tensor__": [layer.name, node_index, tensor.index]}

    @classmethod
    def from_config(cls, config, custom_objects=None):
        layers, created = {}, {}
        for spec in config["layers"]:
            layer_class = get_layer_class(spec["class_name"], custom_objects)
            layer = layer_from_config(layer_class, spec["config"], custom_objects)
            layers[spec["name"]] = layer
            created[spec["name"]] = []
            if isinstance(layer, InputLayer):
                created[spec["name"]].append(layer.output)

        def resolve(item):
            if isinstance(item, dict) and "__keras_tensor__" in item:
                name, node_index, tensor_index = item["__keras_tensor__"]
                return _flatten(created[name][node_index])[tensor_index]
            return item

        pending = [(spec, i) for spec in config["layers"] for i in range(len(spec["inbound_nodes"]))]
        while pending:
            progressed = False
            for spec, i in list(pending):
                node = spec["inbound_nodes"][i]
                try:
                    inputs = _map_refs(resolve, node["inputs"])
                    args = [_map_refs(resolve, arg) for arg in node["args"]]
                    kwargs = {k: _map_refs(resolve, v) for k, v in node["kwargs"].items()}
                except (KeyError, IndexError):
                    continue
                if len(created[spec["name"]]) != i:
                    continue
                created[spec["name"]].append(layers[spec["name"]](inputs, *args, **kwargs))
                pending.remove((spec, i))
                progressed = True
            if not progressed:
                raise ValueError("The model config has layer connections that cannot be resolved.")
        inputs = _map_refs(resolve, config["input_layers"])
        outputs = _map_refs(resolve, config["output_layers"])
        return cls(inputs, outputs, name=config.get("name"), trainable=config.get("trainable", True))


def standardize_input_rank(value, expected, mismatch):
    """``value`` fitted to a model input of shape ``expected``, as Keras's
    functional models take data: one axis short where the input ends in a
    size-1 axis gets it (``(N,)`` into ``Input((1,))``: a pandas column, a
    1-D array), one extra trailing size-1 axis is dropped.

    Args:
        mismatch: the error message when the shape still does not fit, a
            format string naming the model input, with ``{expected}`` and
            ``{received}``.
    """
    shape = tuple(getattr(value, "shape", ()))
    if len(shape) == len(expected) - 1 and expected[-1] == 1:
        value, shape = _expand_last(value), shape + (1,)
    elif len(shape) == len(expected) + 1 and shape[-1] == 1:
        value, shape = _drop_last(value), shape[:-1]
    if len(shape) != len(expected) or any(e is not None and s != e for s, e in zip(shape, expected)):
        raise ValueError(mismatch.format(expected=expected, received=shape))
    return value


def _expand_last(value):
    return ops.expand_dims(value, -1) if isinstance(value, Tensor) else numpy.expand_dims(value, -1)


def _drop_last(value):
    return ops.squeeze(value, -1) if isinstance(value, Tensor) else numpy.squeeze(value, -1)


def _map_refs(function, structure):
    if isinstance(structure, dict) and "__keras_tensor__" in structure:
        return function(structure)
    if isinstance(structure, (list, tuple)):
        return type(structure)(_map_refs(function, item) for item in structure)
    if isinstance(structure, dict):
        return {key: _map_refs(function, value) for key, value in structure.items()}
    return structure

