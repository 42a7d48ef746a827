"""Keras 3's config schema, read and written.

Keras 3 writes every object as ``{"module", "class_name", "config",
"registered_name"}`` (layers add ``build_config``, models ``compile_config``);
tf.keras 2 wrote ``{"class_name", "config"}`` and an older node format.
minikeras's own ``get_config()`` already uses Keras's argument names, so the
translation is mostly structural: dtype policies, module hints, model
graphs, and arguments Keras has and minikeras does not.

Reading (:func:`to_minikeras`) accepts Keras 3, tf.keras 2 and minikeras's
own configs and returns minikeras's ``{"class_name", "config"}`` form, ready
for ``from_config``. Class names resolve only against minikeras's layer
registry and ``custom_objects``: the ``module`` field is a hint that is never
imported. Writing is keras_config_writer.py.
"""
import inspect

from minikeras._support import object_registration
from minikeras._support.safe_mode import refuse_lambda, resolve_safe_mode
from minikeras.layers.base import Layer, get_layer_class
from minikeras.saving.keras_operations import (
    function_to_minikeras, is_keras_function, is_keras_operation, operation_to_minikeras,
)

# Arguments Keras has and minikeras's constructors do not take, with the
# values for which dropping them changes nothing (ANY: no effect on the
# math minikeras does). Another value is refused with a clear error rather
# than loading a model that computes something else.
ANY = object()
KERAS_ONLY_ARGUMENTS = {
    "quantization_config": (None,),
    "lora_rank": (None,),
    "lora_alpha": (None,),
    "renorm": (False,),
    "renorm_clipping": (None,),
    "renorm_momentum": ANY,
    "rms_scaling": (False,),
    "zero_output_for_mask": ANY,  # only matters with masks
    "sparse": (False, None),
    "ragged": (False, None),
    "optional": (False,),
    "input_axes": (None,),
    "output_axes": (None,),
    "seed": ANY,  # random streams differ between libraries anyway
    "unroll": ANY,
    "implementation": ANY,  # tf.keras 2 RNN kernels: same math
    "time_major": (False,),
    "input_length": ANY,  # tf.keras 2 Embedding: shape hint only
    "build_input_shape": ANY,
    "autocast": (True,),
    "use_gate": (False,),  # MultiHeadAttention (recent Keras 3)
    "sliding_window": (None,),  # MultiHeadAttention (recent Keras 3)
    "oov_method": ("floormod",),  # lookup layers' default hashing of out-of-vocabulary values
    "salt": (None,),  # lookup layers: hashing salt
    "vocabulary_size": ANY,  # lookup layers: informational, the vocabulary itself is saved
}

# Arguments with another name in Keras (Keras name -> minikeras name).
RENAMED_ARGUMENTS = {"InputLayer": {"batch_shape": "batch_input_shape"}}

# Arguments minikeras's config has and Keras's constructor refuses (weightless
# layers, so dropping them changes nothing).
NOT_IN_KERAS = {"SpatialDropout1D": ("trainable",), "SpatialDropout2D": ("trainable",),
                "SpatialDropout3D": ("trainable",)}

# Where each kind of nested object lives in Keras, by the suffix of the argument holding it.
_OBJECT_MODULES = (("_initializer", "keras.initializers"), ("_regularizer", "keras.regularizers"),
                   ("_constraint", "keras.constraints"))
_LAYER_ARGUMENTS = ("layer", "backward_layer", "cell")  # arguments holding a layer's own spec
_LAYER_LIST_ARGUMENTS = {"Pipeline": "layers", "StackedRNNCells": "cells"}  # ... or a list of them
_MODEL_MODULES = {"Sequential": "keras", "Functional": "keras.src.models.functional"}


class UnknownObjectError(ValueError):
    """A class name in a file that is neither a minikeras class nor in ``custom_objects``."""


# ------------------------------------------------------------------ reading
def resolve_layer_class(class_name, registered_name=None, custom_objects=None, source="the file"):
    """The minikeras class for a Keras ``class_name`` / ``registered_name``.

    Only the library registry and ``custom_objects`` are consulted; nothing
    is imported. ``registered_name`` like ``"my_package>MyLayer"`` may be
    given in ``custom_objects`` under either name.

    Raises:
        UnknownObjectError: naming the class and pointing to ``custom_objects``.
    """
    import minikeras.models  # noqa: F401  (registers Sequential and Functional)
    import minikeras.layers.symbolic_ops  # noqa: F401  (registers the graph's op nodes: ops.square(x), ...)

    custom_objects = custom_objects or {}
    for key in (registered_name, class_name):
        if key and key in custom_objects:
            return custom_objects[key]
    registered = object_registration.registered_objects().get(registered_name) if isinstance(registered_name, str) else None
    if isinstance(registered, type) and issubclass(registered, Layer):
        return registered
    if class_name in ("Model", "Functional"):
        class_name = "Functional"
    try:
        return get_layer_class(class_name)
    except ValueError:
        pass
    # The applications' own layers (ConvNeXt's LayerScale, ...) register when
    # minikeras's applications package loads: a fixed module of the library.
    import minikeras.applications  # noqa: F401

    try:
        return get_layer_class(class_name)
    except ValueError:
        raise UnknownObjectError(
            f"Unknown layer class '{registered_name or class_name}' in {source}: it is neither a minikeras layer "
            f"nor given in custom_objects. Pass it when loading: load_model(path, custom_objects="
            f"{{'{class_name}': {class_name}}})."
        ) from None


def _accepted_arguments(cls):
    """The keyword arguments ``cls(...)`` takes, following ``**kwargs`` up the classes."""
    accepted = set()
    for klass in cls.__mro__:
        init = vars(klass).get("__init__")
        if init is None:
            continue
        parameters = inspect.signature(init).parameters
        accepted.update(name for name, p in parameters.items() if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY))
        # Layer.__init__ refuses unknown keywords although it takes **kwargs.
        if klass is Layer or not any(p.kind == p.VAR_KEYWORD for p in parameters.values()):
            return accepted - {"self"}
    return None  # takes anything


def _drop_keras_only(cls, config, what, source):
    accepted = _accepted_arguments(cls)
    if accepted is None:
        return config
    kept = {}
    for key, value in config.items():
        if key in accepted:
            kept[key] = value
            continue
        neutral = KERAS_ONLY_ARGUMENTS.get(key)
        if neutral is ANY or (neutral is not None and any(value == n for n in neutral)):
            continue
        raise ValueError(
            f"{what} in {source} has the argument {key}={value!r}, which minikeras's {cls.__name__} does not "
            "support. Remove it from the model (or load the weights into a model built in code)."
        )
    return kept


def _dtype_name(value):
    """A layer's ``dtype``: Keras's serialized DTypePolicy (or tf.keras's
    ``Policy``) as the policy's name, e.g. ``"mixed_float16"``. Quantized
    policies (``QuantizedDTypePolicy``...) and maps stay serialized, for
    ``dtype_policies.get``; so does a plain policy whose name reads as a
    quantized one (``DTypePolicy("int8")``: a name alone would not parse)."""
    from minikeras.dtype_policies import QUANTIZATION_MODES

    if isinstance(value, dict) and value.get("class_name") in ("DTypePolicy", "Policy", "FloatDTypePolicy"):
        name = (value.get("config") or {}).get("name")
        if not (isinstance(name, str) and name.startswith(QUANTIZATION_MODES)):
            value = name
    elif isinstance(value, str) and value.startswith(QUANTIZATION_MODES) and "_from_" not in value:
        # tf.keras 2's Policy("int8"): a plain dtype there, not a quantized policy's name
        value = {"class_name": "DTypePolicy", "config": {"name": value}}
    return value


def _nested_object(value, kind_module, custom_objects, source):
    """An initializer / regularizer / constraint config in minikeras's form."""
    from minikeras import constraints, initializers, regularizers

    if not isinstance(value, dict) or "class_name" not in value:
        return value
    registries = {"keras.initializers": initializers, "keras.regularizers": regularizers,
                  "keras.constraints": constraints}
    name = value.get("registered_name") or value["class_name"]
    config = dict(value.get("config") or {})
    if custom_objects and name in custom_objects:
        return {"class_name": name, "config": config}
    cls = registries[kind_module]._REGISTRY.by_name.get(value["class_name"])
    if cls is not None:
        config = _drop_keras_only(cls, config, f"{value['class_name']}", source)
    return {"class_name": value["class_name"], "config": config}


def layer_config_to_minikeras(class_name, config, cls, custom_objects, safe_mode, source):
    """One layer's Keras config as the arguments of minikeras's ``cls``."""
    config = dict(config)
    what = f"Layer {class_name} '{config.get('name')}'"
    if class_name == "Lambda" and resolve_safe_mode(safe_mode):
        function = config.get("function")
        refuse_lambda(config.get("name"), function if isinstance(function, str) else "<bytecode>",
                      config.get("module"))
    if isinstance(config.get("function"), dict):
        raise ValueError(f"{what} in {source} holds serialized Python bytecode, which minikeras never runs. "
                         "Pass the function by name in custom_objects.")
    if class_name == "Lambda":
        # Only custom_objects or registered functions may supply the function
        # (Lambda.from_config resolves it): the file's module hint is dropped
        # so that nothing is looked up by a name the file chose.
        function = config.get("function")
        if not isinstance(function, str):
            raise ValueError(f"{what} in {source} names no function ({function!r}).")
        config.pop("module", None)
        config.pop("function_type", None)
    for keras_name, name in RENAMED_ARGUMENTS.get(class_name, {}).items():
        if keras_name in config:
            config[name] = config.pop(keras_name)
    if "dtype" in config:
        config["dtype"] = _dtype_name(config["dtype"])
    for key, value in list(config.items()):
        if key in _LAYER_ARGUMENTS and isinstance(value, dict):
            config[key] = to_minikeras(value, custom_objects, safe_mode, source)
            continue
        if _LAYER_LIST_ARGUMENTS.get(class_name) == key and isinstance(value, list):
            config[key] = [to_minikeras(item, custom_objects, safe_mode, source) if isinstance(item, dict) else item
                           for item in value]
            continue
        for suffix, module in _OBJECT_MODULES:
            if key.endswith(suffix):
                config[key] = _nested_object(value, module, custom_objects, source)
    if class_name in ("Sequential", "Functional", "Model") or not cls.__module__.startswith("minikeras."):
        return config  # a user's class reads its own config
    return _drop_keras_only(cls, config, what, source)


def _tensor_reference(value):
    """A Keras 3 ``__keras_tensor__`` (or a history triple) as minikeras's reference."""
    if isinstance(value, dict) and value.get("class_name") == "__keras_tensor__":
        return {"__keras_tensor__": list(value["config"]["keras_history"])}
    if isinstance(value, dict):
        return {key: _tensor_reference(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_tensor_reference(item) for item in value]
    return value


def _history_structure(value):
    """``input_layers`` / ``output_layers``: a triple or a (nested) list of triples."""
    if (isinstance(value, list) and len(value) == 3 and isinstance(value[0], str)
            and all(isinstance(v, int) for v in value[1:])):
        return {"__keras_tensor__": list(value)}
    if isinstance(value, list):
        return [_history_structure(item) for item in value]
    if isinstance(value, dict):
        return value if "__keras_tensor__" in value else {k: _history_structure(v) for k, v in value.items()}
    return value


def _node_to_minikeras(node):
    if isinstance(node, dict) and "inputs" in node:
        return node  # minikeras's own form
    if isinstance(node, dict):  # Keras 3: {"args": [...], "kwargs": {...}}
        args = [_tensor_reference(arg) for arg in node.get("args", [])]
        kwargs = {k: _tensor_reference(v) for k, v in (node.get("kwargs") or {}).items() if v is not None}
        return {"inputs": args[0] if args else None, "args": args[1:], "kwargs": kwargs}
    # tf.keras 2: a list of [layer_name, node_index, tensor_index, kwargs]
    references = [{"__keras_tensor__": list(entry[:3])} for entry in node]
    kwargs = dict(node[0][3]) if node and len(node[0]) > 3 and node[0][3] else {}
    kwargs = {k: v for k, v in kwargs.items() if v is not None}
    return {"inputs": references[0] if len(references) == 1 else references, "args": [], "kwargs": kwargs}


def _model_config_to_minikeras(class_name, config, custom_objects, safe_mode, source):
    config = dict(config)
    config.pop("dtype", None)
    layers = []
    for spec in config.get("layers", []):
        if class_name == "Functional" and is_keras_operation(spec):  # ``inputs + x`` and kin
            layers.append(operation_to_minikeras(spec, _tensor_reference, source))
            continue
        if class_name == "Functional" and is_keras_function(spec):  # ``ops.square(x)``, ``x[:, 0]`` and kin
            layers.append(function_to_minikeras(spec, _tensor_reference, source))
            continue
        converted = to_minikeras(spec, custom_objects, safe_mode, source)
        if class_name == "Functional":
            converted["name"] = spec.get("name") or converted["config"].get("name")
            converted["inbound_nodes"] = [_node_to_minikeras(node) for node in spec.get("inbound_nodes", [])]
        layers.append(converted)
    if class_name == "Sequential":
        if layers and layers[0]["class_name"] == "InputLayer":
            input_config = layers.pop(0)["config"]
            config["batch_input_shape"] = input_config["batch_input_shape"]
            if isinstance(input_config.get("dtype"), str) and input_config["dtype"] != "float32":
                config["input_dtype"] = input_config["dtype"]
        elif config.get("build_input_shape") is not None and "batch_input_shape" not in config:
            config["batch_input_shape"] = config["build_input_shape"]
        config.pop("build_input_shape", None)
    else:
        # As Keras does, a list of one input or output is that input or output.
        for key in ("input_layers", "output_layers"):
            structure = _history_structure(config[key])
            config[key] = structure[0] if isinstance(structure, list) and len(structure) == 1 else structure
    config["layers"] = layers
    return config


def to_minikeras(spec, custom_objects=None, safe_mode=True, source="the file"):
    """A Keras 3 / tf.keras 2 / minikeras layer or model spec in minikeras's form.

    Args:
        spec: ``{"class_name", "config", ...}`` as read from a file.
        custom_objects: ``{name: class}`` for classes that are not minikeras's.
        safe_mode: refuse layers that would run Python code from the file (Lambda).
        source: how to name the file in messages.

    Returns:
        ``{"class_name", "config"}`` (plus ``build_config`` when the file has it).

    Raises:
        UnknownObjectError: a class that is neither minikeras's nor in custom_objects.
        ValueError: a malformed spec, a Lambda in safe mode, an argument minikeras lacks.
    """
    if not isinstance(spec, dict) or "class_name" not in spec:
        raise ValueError(f"Malformed layer config in {source}: expected a dict with 'class_name', "
                         f"received {str(spec)[:200]!r}.")
    class_name = "Functional" if spec["class_name"] == "Model" else spec["class_name"]
    cls = resolve_layer_class(class_name, spec.get("registered_name"), custom_objects, source)
    config = spec.get("config") or {}
    from minikeras.models.functional import Functional
    from minikeras.models.sequential import Sequential

    kind = "Sequential" if issubclass(cls, Sequential) else "Functional" if issubclass(cls, Functional) else None
    if kind is not None and isinstance(config, dict) and "layers" in config:
        config = _model_config_to_minikeras(kind, config, custom_objects, safe_mode, source)
    else:
        config = layer_config_to_minikeras(class_name, config, cls, custom_objects, safe_mode, source)
    result = {"class_name": spec.get("registered_name") if spec.get("registered_name") in (custom_objects or {})
              else cls.__name__, "config": config}
    if spec.get("build_config"):
        result["build_config"] = spec["build_config"]
    return result
