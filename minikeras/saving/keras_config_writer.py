"""minikeras layers and models written in Keras 3's config schema.

The inverse of keras_config.py's reading: every object becomes
``{"module", "class_name", "config", "registered_name"}`` (``build_config``
for built layers), functional graphs get Keras's node format with tensor
shapes, and layers are listed in Keras's order (keras_order.py). What Keras
3's ``load_model`` expects; the tables of names that differ live in
keras_config.py.
"""
from minikeras._support import object_registration
from minikeras._support.nest import flatten
from minikeras.layers.base import get_layer_class, user_layer_class_named
from minikeras.saving.keras_operations import operation_to_keras
from minikeras.saving.keras_config import (_LAYER_ARGUMENTS, _MODEL_MODULES, _OBJECT_MODULES, NOT_IN_KERAS,
                                           RENAMED_ARGUMENTS)


def _dtype_policy(name):
    from minikeras import dtype_policies

    if name.startswith(dtype_policies.QUANTIZATION_MODES) and "_from_" in name:  # Keras's QuantizedDTypePolicy
        return dtype_policies.serialize(dtype_policies.get(name))
    return {"module": "keras", "class_name": "DTypePolicy", "config": {"name": name}, "registered_name": None}


def _keras_object(value, module):
    if isinstance(value, dict) and "class_name" in value and "module" not in value:
        return {"module": module, "class_name": value["class_name"], "config": value.get("config") or {},
                "registered_name": None}
    return value


def layer_config_to_keras(class_name, config):
    """A minikeras layer config with Keras 3's names and nested schema."""
    config = dict(config)
    for key in NOT_IN_KERAS.get(class_name, ()):
        config.pop(key, None)
    for keras_name, name in RENAMED_ARGUMENTS.get(class_name, {}).items():
        if name in config:
            config[keras_name] = config.pop(name)
    if class_name != "InputLayer":
        # Keras 3 layers take input_shape, not batch_input_shape.
        batch_input_shape = config.pop("batch_input_shape", None)
        if batch_input_shape is not None and batch_input_shape[0] is None:
            config["input_shape"] = list(batch_input_shape[1:])
        if isinstance(config.get("dtype"), str):
            config["dtype"] = _dtype_policy(config["dtype"])
    for key, value in list(config.items()):
        if key in _LAYER_ARGUMENTS and isinstance(value, dict):
            config[key] = spec_to_keras(value["class_name"], value["config"])
            continue
        for suffix, module in _OBJECT_MODULES:
            if key.endswith(suffix):
                config[key] = _keras_object(value, module)
    return {key: _nested_objects_to_keras(value) for key, value in config.items()}


def _nested_objects_to_keras(value):
    """Objects a config holds as they are (a custom ``get_config`` returning
    its sublayers, an initializer, a function) in Keras's schema, at any
    depth, as Keras's ``serialize_dict`` writes them: a registered class
    under its ``registered_name`` ("package>name")."""
    from minikeras.layers.base import Layer
    from minikeras.saving.serialization_lib import _kind_of, serialize_keras_object

    if isinstance(value, Layer):
        return to_keras(value)
    if isinstance(value, dict):
        return {key: _nested_objects_to_keras(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_nested_objects_to_keras(item) for item in value)
    if _kind_of(value) is not None or (callable(value) and not isinstance(value, type)
                                       and getattr(value, "__name__", "<lambda>") != "<lambda>"):
        return serialize_keras_object(value)
    return value


def _reference_to_keras(value):
    if isinstance(value, dict) and "__keras_tensor__" in value:
        return {"class_name": "__keras_tensor__",
                "config": {"shape": None, "dtype": None, "keras_history": list(value["__keras_tensor__"])}}
    if isinstance(value, dict):
        return {key: _reference_to_keras(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_reference_to_keras(item) for item in value]
    return value


def _history_to_keras(value):
    if isinstance(value, dict) and "__keras_tensor__" in value:
        return list(value["__keras_tensor__"])
    if isinstance(value, (list, tuple)):
        return [_history_to_keras(item) for item in value]
    return value


def _model_config_to_keras(class_name, config):
    config = dict(config)
    layers = []
    if class_name == "Sequential" and config.get("batch_input_shape") is not None:
        shape = list(config.pop("batch_input_shape"))
        dtype = config.pop("input_dtype", "float32")
        layers.append(spec_to_keras("InputLayer", {"batch_shape": shape, "dtype": dtype, "sparse": False,
                                                   "name": f"{config['name']}_input"}))
        config["build_input_shape"] = shape
    for spec in config["layers"]:
        if spec["class_name"] == "SymbolicOperation" and "arguments" not in spec["config"]:  # Keras's node
            layers.append(operation_to_keras(spec, _reference_to_keras))
            continue
        keras_spec = spec_to_keras(spec["class_name"], spec["config"])
        if spec.get("build_config") is not None:
            keras_spec["build_config"] = spec["build_config"]
        if class_name == "Functional":
            keras_spec["name"] = spec["name"]
            keras_spec["inbound_nodes"] = [
                {"args": [_reference_to_keras(node["inputs"])] + [_reference_to_keras(a) for a in node["args"]],
                 "kwargs": _reference_to_keras(node["kwargs"])} for node in spec["inbound_nodes"]]
        layers.append(keras_spec)
    config["layers"] = layers
    if class_name == "Sequential":
        config["dtype"] = _dtype_policy("float32")
    if class_name == "Functional":
        config["input_layers"] = _history_to_keras(config["input_layers"])
        config["output_layers"] = _history_to_keras(config["output_layers"])
    return config


def _class_for_writing(class_name):
    """The class a config being saved names. Writing trusts the live model, so
    a user's unregistered class is found by name too (loading does not:
    layers.base.get_layer_class)."""
    registered = object_registration.registered_objects().get(class_name)
    if isinstance(registered, type):
        return get_layer_class(class_name)
    return user_layer_class_named(class_name) or get_layer_class(class_name)


def spec_to_keras(class_name, config, cls=None):
    """``{"module", "class_name", "config", "registered_name"}`` for a minikeras class and config."""
    cls = cls or _class_for_writing(class_name)
    from minikeras.models.functional import Functional
    from minikeras.models.sequential import Sequential

    if cls.__module__.startswith("minikeras.applications."):  # ConvNeXt's LayerScale: where Keras defines it
        module, registered_name = "keras.src.applications." + cls.__module__.rsplit(".", 1)[-1], cls.__name__
    elif cls.__module__.startswith("minikeras."):
        module, registered_name = "keras.layers", None
    else:
        module, registered_name = None, keras_registered_name(cls)
    if issubclass(cls, (Sequential, Functional)) and cls.__module__.startswith("minikeras."):
        class_name = "Sequential" if issubclass(cls, Sequential) else "Functional"
        module = _MODEL_MODULES[class_name]
        registered_name = "Functional" if class_name == "Functional" else None
        config = _model_config_to_keras(class_name, config)
    else:
        config = layer_config_to_keras(cls.__name__, config)
    return {"module": module, "class_name": cls.__name__ if registered_name != "Functional" else "Functional",
            "config": config, "registered_name": registered_name}


def _fill_tensor_shapes(spec, model):
    """List a functional model's layers in Keras's order and give every
    ``__keras_tensor__`` its shape and dtype (Keras rebuilds the graph from
    them), nested functional models included."""
    from minikeras.models.functional import Functional

    if not isinstance(model, Functional):
        return
    known = {}
    for node in model._nodes:
        for tensor in flatten(node.outputs):
            reference = model._tensor_ref(tensor)
            if isinstance(reference, dict) and "__keras_tensor__" in reference:
                known[tuple(reference["__keras_tensor__"])] = (list(tensor.shape), tensor.dtype)

    def fill(value):
        if isinstance(value, dict) and value.get("class_name") == "__keras_tensor__":
            shape, dtype = known.get(tuple(value["config"]["keras_history"]), (None, None))
            value["config"]["shape"], value["config"]["dtype"] = shape, dtype
        elif isinstance(value, dict):
            for item in value.values():
                fill(item)
        elif isinstance(value, list):
            for item in value:
                fill(item)

    from minikeras.saving.keras_order import keras_layer_order

    position = {layer.name: index for index, layer in enumerate(keras_layer_order(model))}
    spec["config"]["layers"].sort(key=lambda layer_spec: position.get(layer_spec.get("name"), len(position)))
    layers_by_name = {layer.name: layer for layer in model.layers}
    for layer_spec in spec["config"]["layers"]:
        fill(layer_spec.get("inbound_nodes", []))
        inner = layers_by_name.get(layer_spec.get("name"))
        if isinstance(inner, Functional):
            _fill_tensor_shapes(layer_spec, inner)


def keras_registered_name(cls):
    """Keras's ``registered_name`` of a user's class: ``"<package>>ClassName"`` (package "Custom" by default)."""
    # vars(): a subclass of a registered class is not registered itself.
    return vars(cls).get("_keras_registered_name") or f"Custom>{cls.__name__}"


def to_keras(layer):
    """The Keras 3 spec of a minikeras layer or model (``build_config`` included when known)."""
    spec = spec_to_keras(type(layer).__name__, layer.get_config(), cls=type(layer))
    _fill_tensor_shapes(spec, layer)
    from minikeras.layers.build_config import overrides

    if overrides(layer, "get_build_config"):  # a user's build needs more than a shape: Keras saves what it says
        build_config = layer.get_build_config()
        if build_config is not None:
            spec["build_config"] = build_config
        return spec
    shape = getattr(layer, "_build_input_shape", None)
    if shape is None and getattr(layer, "inputs", None):
        shapes = [list(t.shape) for t in layer.inputs]
        shape = shapes[0] if len(shapes) == 1 else shapes
    from minikeras.models.model import Model

    if shape is not None or isinstance(layer, Model):  # Keras builds a layer from it, so never from None
        spec["build_config"] = {"input_shape": shape}
    return spec
