"""The training configuration (compile arguments) as JSON, and back.

``model.compile(optimizer, loss, metrics, loss_weights)`` arguments are
stored as given: names stay names; Loss and Metric objects are stored as
``{"__object__": "loss"|"metric", "class_name", "config"}``; functions by
name as ``{"__function__": name}`` (library functions are found again by
name, others need ``custom_objects``). The optimizer is stored with
``optimizers.serialize``; its state (step count and slots) is saved apart,
as arrays.
"""
import json

import numpy
from minikeras._support import object_registration


class _Unserializable(TypeError):
    pass


def _function_name(function):
    name = getattr(function, "__name__", None)
    if not name or name == "<lambda>":
        raise _Unserializable(
            f"cannot store the function {function!r} by name (a lambda or an unnamed callable); "
            "use a named function and pass it in custom_objects when loading"
        )
    return name


def encode(value):
    """Compile arguments as JSON-friendly data (see the module docstring)."""
    from minikeras.losses import Loss
    from minikeras.metrics import Metric

    if value is None or isinstance(value, (str, bool, int, float)):
        return value
    if isinstance(value, numpy.generic):
        return value.item()
    if isinstance(value, numpy.ndarray):
        return value.tolist()
    if isinstance(value, (list, tuple)):
        return [encode(item) for item in value]
    if isinstance(value, dict):
        return {str(key): encode(item) for key, item in value.items()}
    if isinstance(value, (Loss, Metric)):
        kind = "loss" if isinstance(value, Loss) else "metric"
        return {"__object__": kind, "class_name": type(value).__name__, "config": encode(value.get_config())}
    if isinstance(value, type):
        return {"__class__": value.__name__}
    if callable(value):
        return {"__function__": _function_name(value)}
    raise _Unserializable(f"cannot store {type(value).__name__} {value!r} in the training config")


def decode(value, custom_objects, source):
    """The inverse of :func:`encode`: names, new Loss/Metric objects, functions."""
    if isinstance(value, list):
        return [decode(item, custom_objects, source) for item in value]
    if not isinstance(value, dict):
        return value
    if "__function__" in value:
        return _lookup_function(value["__function__"], custom_objects, source)
    if "__class__" in value:
        return _lookup_class(value["__class__"], custom_objects, source)
    if "__object__" in value:
        config = decode(value.get("config") or {}, custom_objects, source)
        spec = {"class_name": value["class_name"], "config": config}
        if value["__object__"] == "loss":
            from minikeras import losses

            return losses.deserialize(spec, custom_objects)
        from minikeras import metrics

        return metrics.deserialize(spec, custom_objects)
    return {key: decode(item, custom_objects, source) for key, item in value.items()}


_METRIC_FUNCTIONS = ("accuracy", "binary_accuracy", "categorical_accuracy", "sparse_categorical_accuracy",
                     "top_k_categorical_accuracy", "sparse_top_k_categorical_accuracy")


def _allowed_functions():
    """The library functions a training config may name: the losses and the
    metric functions, by an explicit list (never an attribute lookup)."""
    from minikeras import losses, metrics

    allowed = {name: found for name, found in losses.ALL_OBJECTS.items()
               if callable(found) and not isinstance(found, type)}
    allowed.update({name: vars(metrics)[name] for name in _METRIC_FUNCTIONS})
    return allowed


def _lookup_function(name, custom_objects, source):
    try:
        found = object_registration.resolve_name(name, _allowed_functions(), custom_objects, kind="function",
                                                 source=f"the training config of {source}")
    except ValueError:
        raise ValueError(
            f"Unknown function {name!r} in the training config of {source}. Pass it when loading: "
            f"load_model(path, custom_objects={{{name!r}: {name}}}), or load with compile=False."
        ) from None
    if not callable(found) or isinstance(found, type):
        raise ValueError(f"The training config of {source} names {name!r}, which is not a function.")
    return found


def _lookup_class(name, custom_objects, source):
    from minikeras import losses, metrics
    allowed = {key: value for table in (metrics.ALL_OBJECTS, losses.ALL_OBJECTS)
               for key, value in table.items() if isinstance(value, type)}
    found = object_registration.resolve_name(name, allowed, custom_objects, kind="loss or metric class",
                                             source=f"the training config of {source}")
    if not isinstance(found, type):
        raise ValueError(f"The training config of {source} names {name!r}, which is not a class.")
    return found


def training_config_json(model):
    """The model's compile arguments and optimizer config as a JSON string.

    Raises:
        TypeError: something in them cannot be stored (e.g. a lambda loss).
    """
    from minikeras import optimizers

    arguments = getattr(model, "_compile_args", None) or {}
    try:
        config = {
            "loss": encode(arguments.get("loss")),
            "metrics": encode(arguments.get("metrics")),
            "loss_weights": encode(arguments.get("loss_weights")),
            "optimizer_config": encode(optimizers.serialize(model.optimizer)),
        }
    except _Unserializable as error:
        raise TypeError(
            f"Cannot save the training configuration of model '{model.name}': {error}. "
            "Save with include_optimizer=False to skip it."
        ) from None
    return json.dumps(config)


def compile_from_json(model, text, custom_objects, source):
    """``model.compile(...)`` with the arguments stored by :func:`training_config_json`."""
    from minikeras import optimizers

    config = json.loads(text)
    optimizer_spec = decode(config["optimizer_config"], custom_objects, source)
    optimizer = optimizers.deserialize(optimizer_spec, custom_objects)
    model.compile(
        optimizer=optimizer,
        loss=decode(config.get("loss"), custom_objects, source),
        metrics=decode(config.get("metrics"), custom_objects, source),
        loss_weights=decode(config.get("loss_weights"), custom_objects, source),
    )
