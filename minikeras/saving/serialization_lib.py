"""Keras 3's ``serialize_keras_object`` / ``deserialize_keras_object`` and
the model JSON (``Model.to_json``, ``models.model_from_json``).

An object becomes Keras 3's ``{"module", "class_name", "config",
"registered_name"}`` dict: layers and models through the same writer as
``.keras`` files (keras_config_writer.py), so the JSON is what Keras writes
and Keras's ``model_from_json`` reads it; optimizers, losses, metrics,
initializers, regularizers and constraints by their ``get_config``; named
functions as ``{"class_name": "function", "config": name}``.

Reading is as safe as loading a file: the ``module`` field is a hint that
picks which of minikeras's registries to search, never something imported;
classes resolve against minikeras's own objects, ``custom_objects``,
``register_keras_serializable``/``get_custom_objects`` and active
``custom_object_scope`` blocks. Lambda layers, and lookups whose config
names a vocabulary file, are refused in safe mode.
"""
import json

import numpy
from minikeras._support import object_registration
from minikeras._support.safe_mode import deserialization_scope


# Keras's module of each kind of object, and the family that rebuilds it.
_KINDS = ("layers", "models", "optimizers", "losses", "metrics", "initializers", "regularizers", "constraints",
          "activations")


def _kind_of(obj):
    from minikeras import constraints, initializers, losses, metrics, optimizers, regularizers
    from minikeras.layers import Layer

    for kind, base in (("layers", Layer), ("optimizers", optimizers.Optimizer), ("losses", losses.Loss),
                       ("metrics", metrics.Metric), ("initializers", initializers.Initializer),
                       ("regularizers", regularizers.Regularizer), ("constraints", constraints.Constraint)):
        if isinstance(obj, base):
            return kind
    return None


def serialize_keras_object(obj):
    """A JSON-friendly dict (Keras 3's schema) for ``obj``.

    Args:
        obj: a layer, model, optimizer, loss, metric, initializer,
            regularizer, constraint, named function, NumPy array, or plain
            data (None, numbers, strings, lists, tuples, dicts of these).

    Returns:
        Plain data; objects become ``{"module", "class_name", "config",
        "registered_name"}`` (layers and models add ``build_config``).

    Raises:
        TypeError: an object with no ``get_config`` and no name (a lambda).
    """
    from minikeras.saving import keras_config_writer

    if obj is None or isinstance(obj, (bool, int, float, str)):
        return obj
    if isinstance(obj, numpy.generic):
        return obj.item()
    if isinstance(obj, numpy.ndarray):
        return {"class_name": "__numpy__", "config": {"value": obj.tolist(), "dtype": str(obj.dtype)}}
    if isinstance(obj, (list, tuple)):
        return [serialize_keras_object(item) for item in obj]
    if isinstance(obj, dict):
        return {str(key): serialize_keras_object(value) for key, value in obj.items()}
    kind = _kind_of(obj)
    if kind == "layers":
        return keras_config_writer.to_keras(obj)
    if kind is not None:
        own = object_registration.is_library_object(type(obj))
        return {"module": f"keras.{kind}" if own else type(obj).__module__, "class_name": type(obj).__name__,
                "config": serialize_keras_object(obj.get_config()),
                "registered_name": None if own else object_registration.get_registered_name(type(obj))}
    if isinstance(obj, type) or not callable(obj) or getattr(obj, "__name__", "<lambda>") == "<lambda>":
        raise TypeError(f"Cannot serialize {obj!r}: expected a Keras object with get_config(), a named function or "
                        "plain data.")
    registered = object_registration.get_registered_name(obj)
    return {"module": getattr(obj, "__module__", None), "class_name": "function", "config": obj.__name__,
            "registered_name": registered}


def _function(config, custom_objects, source):
    from minikeras import activations
    from minikeras.saving.compile_config import _allowed_functions

    name, registered = config.get("config"), config.get("registered_name")
    lookup = {**_allowed_functions(), **object_registration.registered_objects(), **(custom_objects or {})}
    for key in (registered, name):
        if isinstance(key, str) and key in lookup:
            return lookup[key]
    try:
        return activations.get(name)
    except (ValueError, TypeError):
        raise ValueError(f"Unknown function {name!r} in {source}: pass it in custom_objects={{{name!r}: ...}} or "
                         "register it with register_keras_serializable().") from None


def _family(module, class_name):
    """Which registry a spec belongs to, from its ``module`` hint (a name
    only: nothing is imported)."""
    module = module or ""
    for kind in _KINDS:
        if f".{kind}" in f".{module}" or module.endswith(kind):
            return kind
    return "layers" if class_name not in ("function",) else None


def deserialize_keras_object(config, custom_objects=None, safe_mode=True, **kwargs):
    """Rebuild what :func:`serialize_keras_object` (or Keras) wrote.

    Args:
        config: plain data, or a ``{"class_name", "config", ...}`` dict.
        custom_objects: ``{name: class or function}`` for objects that are
            not minikeras's.
        safe_mode: refuse Lambda layers, whose function would run code.

    Returns:
        The object (a layer or model is built when the spec has its
        ``build_config``).

    Raises:
        ValueError: an unknown class or function name (it is never imported).
    """
    source = kwargs.get("source", "the config")
    if config is None or isinstance(config, (bool, int, float)):
        return config
    if isinstance(config, str):
        return config
    if isinstance(config, (list, tuple)):
        return [deserialize_keras_object(item, custom_objects, safe_mode, source=source) for item in config]
    if not isinstance(config, dict):
        raise TypeError(f"Could not deserialize {config!r}: expected plain data or a dict with 'class_name'.")
    if "class_name" not in config:
        return {key: deserialize_keras_object(value, custom_objects, safe_mode, source=source)
                for key, value in config.items()}
    class_name = config["class_name"]
    if class_name == "__numpy__":
        return numpy.array(config["config"]["value"], dtype=config["config"]["dtype"])
    if class_name == "function":
        return _function(config, custom_objects, source)
    custom_objects = dict(custom_objects or {})
    kind = _family(config.get("module"), class_name)
    registered = config.get("registered_name")
    found = None
    for key in (registered, class_name):
        if isinstance(key, str):
            found = custom_objects.get(key) or object_registration.registered_objects().get(key)
            if found is not None:
                break
    from minikeras.layers import Layer

    if kind in ("layers", "models") or (isinstance(found, type) and issubclass(found, Layer)):
        return _layer(config, custom_objects, safe_mode, source)
    from minikeras import constraints, initializers, losses, metrics, optimizers, regularizers

    inner = {"class_name": class_name, "config": config.get("config") or {}}
    if found is not None:
        inner["class_name"] = registered if registered in custom_objects else class_name
        custom_objects.setdefault(inner["class_name"], found)
    families = {"optimizers": optimizers, "losses": losses, "metrics": metrics, "initializers": initializers,
                "regularizers": regularizers, "constraints": constraints}
    family = families.get(kind)
    if family is None:
        raise ValueError(f"Could not deserialize {class_name!r} from {source}: its module "
                         f"{config.get('module')!r} names no Keras object family.")
    return family.deserialize(inner, custom_objects=custom_objects)


def _layer(spec, custom_objects, safe_mode, source):
    from minikeras.layers.base import layer_from_config
    from minikeras.saving import keras_config
    from minikeras.saving.keras_zip import build_from_spec

    with deserialization_scope(safe_mode):  # as Keras's SafeModeScope: an enclosing safe mode wins
        converted = keras_config.to_minikeras(spec, custom_objects, safe_mode, source)
        cls = keras_config.resolve_layer_class(spec["class_name"], spec.get("registered_name"), custom_objects,
                                               source)
        layer = layer_from_config(cls, converted["config"], custom_objects)
        _build(layer, spec, build_from_spec)
    return layer


def _build(layer, spec, build_from_spec):
    """Build from the spec's ``build_config`` as Keras's ``build_from_config``:
    a model by a call on zeros, a layer by ``build(input_shape)`` (a call
    would need all of a layer's inputs, an attention layer's value too)."""
    from minikeras.layers.build_config import build_from_saved, overrides
    from minikeras.models.model import Model

    if overrides(layer, "build_from_config") or not isinstance(layer, Model):
        build_from_saved(layer, spec.get("build_config"))
    else:
        build_from_spec(layer, spec)


def model_to_json(model, **kwargs):
    """``model.to_json(**kwargs)``: the model's architecture (no weights) as
    Keras 3's JSON, ``json.dumps`` keyword arguments passed on."""
    from minikeras.saving.keras_zip import _json_default

    kwargs.setdefault("default", _json_default)
    return json.dumps(serialize_keras_object(model), **kwargs)


def model_from_json(json_string, custom_objects=None):
    """A new model (fresh weights) from ``to_json``'s output or Keras's.

    Args:
        json_string: the JSON text.
        custom_objects: ``{name: class}`` for layers that are not minikeras's.
    """
    try:
        spec = json.loads(json_string)
    except (TypeError, ValueError) as error:
        raise ValueError(f"model_from_json expects the JSON text of a model config; it does not parse: {error}") \
            from None
    return deserialize_keras_object(spec, custom_objects=custom_objects, source="the JSON model config")
