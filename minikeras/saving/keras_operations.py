"""Keras 3's operation nodes in a functional model's config, read and written.

Arithmetic on symbolic tensors (``inputs + x``) is, in Keras 3, an operation
of ``keras.src.ops.numpy`` in the graph, saved as
``{"module": "keras.src.ops.numpy", "class_name": "Add", "config": {"name"},
"inbound_nodes": [{"args": [tensor or number, ...]}]}``; minikeras records
it as a ``SymbolicOperation`` layer (layers/symbolic_ops.py) whose constant
operand is in its config. These two functions translate one node spec each
way, so Keras's files with such nodes (ConvNeXt's residuals) load, and
minikeras's are written as Keras writes them.
"""
import numbers

# minikeras's operation name -> Keras's operation class.
KERAS_CLASSES = {"add": "Add", "subtract": "Subtract", "multiply": "Multiply", "true_divide": "TrueDivide",
                 "power": "Power", "matmul": "Matmul", "negative": "Negative", "absolute": "Absolute"}
_OPERATIONS = {keras_class: name for name, keras_class in KERAS_CLASSES.items()}


def is_keras_operation(spec):
    """Whether a layer spec of a Keras functional config is one of these operations."""
    return (isinstance(spec, dict) and str(spec.get("module", "")).startswith("keras.src.ops")
            and spec.get("class_name") in _OPERATIONS)


def operation_to_minikeras(spec, tensor_reference, source):
    """A Keras operation node as minikeras's ``SymbolicOperation`` spec
    (``tensor_reference`` turns Keras's ``__keras_tensor__`` into minikeras's)."""
    operation = _OPERATIONS[spec["class_name"]]
    name = spec.get("name") or (spec.get("config") or {}).get("name")
    nodes, constant, constant_first = [], None, False
    for node in spec.get("inbound_nodes", []):
        args = [tensor_reference(arg) for arg in node.get("args", [])]
        tensors = [arg for arg in args if isinstance(arg, dict) and "__keras_tensor__" in arg]
        numbers_given = [arg for arg in args if isinstance(arg, numbers.Number) and not isinstance(arg, bool)]
        if node.get("kwargs") or len(tensors) + len(numbers_given) != len(args) or not tensors or len(args) > 2:
            raise ValueError(f"{source}: the operation {spec['class_name']!r} ({name!r}) has arguments minikeras "
                             f"cannot read (tensors and at most one number expected): {str(node)[:200]}")
        if numbers_given:
            constant, constant_first = numbers_given[0], not isinstance(args[0], dict)
        nodes.append({"inputs": tensors if len(tensors) == 2 else tensors[0], "args": [], "kwargs": {}})
    config = {"name": name, "operation": operation, "constant": constant, "constant_first": constant_first}
    return {"class_name": "SymbolicOperation", "config": config, "name": name, "inbound_nodes": nodes}


def operation_to_keras(spec, reference_to_keras):
    """minikeras's ``SymbolicOperation`` spec as Keras's operation node."""
    config = spec["config"]
    keras_class = KERAS_CLASSES[config["operation"]]
    nodes = []
    for node in spec["inbound_nodes"]:
        tensors = node["inputs"] if isinstance(node["inputs"], list) else [node["inputs"]]
        args = [reference_to_keras(tensor) for tensor in tensors]
        if config.get("constant") is not None:
            args = [config["constant"]] + args if config.get("constant_first") else args + [config["constant"]]
        nodes.append({"args": args, "kwargs": {}})
    return {"module": "keras.src.ops.numpy", "class_name": keras_class, "config": {"name": config["name"]},
            "registered_name": keras_class, "name": spec["name"], "inbound_nodes": nodes}


def is_keras_function(spec):
    """Whether a layer spec of a Keras functional config is any other
    ``keras.ops`` operation (``Square``, ``Mean``, ``GetItem``, ...)."""
    return (isinstance(spec, dict) and str(spec.get("module", "")).startswith("keras.src.ops")
            and spec.get("class_name") not in _OPERATIONS)


def _op_of_class(class_name):
    """The minikeras op a Keras operation class runs: ``ExpandDims`` ->
    ``expand_dims``, ``IsNan`` -> ``isnan`` (NumPy's spelling), or None."""
    from minikeras.layers.naming import to_snake_case
    from minikeras.layers.symbolic_ops import is_public_op

    name = to_snake_case(class_name)
    for candidate in (name, name.replace("_", "")):
        if is_public_op(candidate):
            return candidate
    return None


def function_to_minikeras(spec, tensor_reference, source):
    """A Keras operation node as minikeras's ``SymbolicOperation`` spec: the
    operation's constructor arguments (its config) become the op's keyword
    arguments, its call arguments the positional ones, each tensor a slot."""
    function = _op_of_class(str(spec["class_name"]))
    config = dict(spec.get("config") or {})
    name = config.pop("name", None) or spec.get("name")
    if function is None:
        raise ValueError(f"{source}: the operation {spec['class_name']!r} ({name!r}) has no minikeras op "
                         "to run it.")
    keywords = {key: value for key, value in config.items() if value is not None}  # None: the op's default
    templates, nodes = [], []
    for node in spec.get("inbound_nodes", []):
        inputs = []

        def convert(value):
            if isinstance(value, dict) and value.get("class_name") == "__keras_tensor__":
                inputs.append(tensor_reference(value))
                return {"__tensor__": len(inputs) - 1}
            if isinstance(value, dict) and value.get("class_name") == "__slice__":
                bounds = value.get("config") or {}
                return {"__slice__": [bounds.get("start"), bounds.get("stop"), bounds.get("step")]}
            if isinstance(value, dict):
                return {key: convert(item) for key, item in value.items()}
            if isinstance(value, list):
                return [convert(item) for item in value]
            return value

        arguments = [convert(argument) for argument in node.get("args", [])]
        if function == "get_item" and len(arguments) == 2 and isinstance(arguments[1], list):
            arguments[1] = {"__tuple__": arguments[1]}  # Keras writes the index tuple as a list
        templates.append((arguments, {key: convert(value) for key, value in (node.get("kwargs") or {}).items()}))
        nodes.append({"inputs": inputs, "args": [], "kwargs": {}})
    if any(template != templates[0] for template in templates[1:]):
        raise ValueError(f"{source}: the operation {spec['class_name']!r} ({name!r}) is called with different "
                         "non-tensor arguments at different nodes, which minikeras cannot read.")
    arguments, call_keywords = templates[0] if templates else ([], {})
    config = {"name": name, "operation": function, "constant": None, "constant_first": False,
              "arguments": {"args": arguments, "kwargs": {**keywords, **call_keywords}}}
    return {"class_name": "SymbolicOperation", "config": config, "name": name, "inbound_nodes": nodes}
