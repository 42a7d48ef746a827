"""Keras 3's ``compile_config`` (and tf.keras's ``training_config``), read and written.

Keras stores compile arguments as given: names stay names, objects are
``{"module", "class_name", "config", "registered_name"}`` and functions are
``{"class_name": "function", "config": name}``. Reading resolves every name
against minikeras's losses, metrics and optimizers and ``custom_objects``;
nothing is imported.
"""
import inspect

import numpy

from minikeras._support import object_registration
from minikeras.saving.compile_config import _allowed_functions

_MODULES = {"loss": "keras.losses", "metric": "keras.metrics"}


def _encode(value, kind):
    from minikeras.losses import Loss
    from minikeras.metrics import Metric

    if value is None or isinstance(value, (str, bool, int, float)):
        return value
    if isinstance(value, numpy.generic):
        return value.item()
    if isinstance(value, (list, tuple)):
        return [_encode(item, kind) for item in value]
    if isinstance(value, dict):
        return {str(key): _encode(item, kind) for key, item in value.items()}
    if isinstance(value, (Loss, Metric)):
        module = _MODULES["loss" if isinstance(value, Loss) else "metric"]
        return {"module": module, "class_name": type(value).__name__, "config": value.get_config(),
                "registered_name": None}
    name = getattr(value, "__name__", None)
    if callable(value) and name and name != "<lambda>":
        return {"module": _MODULES[kind], "class_name": "function", "config": name, "registered_name": name}
    raise TypeError(f"Cannot store the compile argument {value!r} (a lambda or an unnamed callable): use a name, "
                    "a Loss/Metric object or a named function (and pass it in custom_objects when loading), or "
                    "save with include_optimizer=False to skip the training configuration.")


def compile_config(model):
    """The model's compile arguments in Keras 3's ``compile_config`` form ({} if not compiled)."""
    from minikeras import optimizers

    arguments = getattr(model, "_compile_args", None) or {}
    if getattr(model, "optimizer", None) is None:
        return {}
    optimizer = optimizers.serialize(model.optimizer)
    optimizer["module"] = "keras.optimizers"
    return {
        "optimizer": optimizer,
        "loss": _encode(arguments.get("loss"), "loss"),
        "loss_weights": _encode(arguments.get("loss_weights"), "loss"),
        "metrics": _encode(arguments.get("metrics"), "metric"),
        "weighted_metrics": _encode(arguments.get("weighted_metrics"), "metric"),
        "run_eagerly": False,
        "steps_per_execution": getattr(model, "steps_per_execution", 1) or 1,
        "jit_compile": bool(getattr(model, "jit_compile", False)),
    }


def model_compile_config(model):
    """The ``compile_config`` to save: the model's own ``get_compile_config()``
    when its class defines one (a ``compile()`` with other arguments, as in
    keras.io's serialization guide), else :func:`compile_config`."""
    if callable(getattr(model, "get_compile_config", None)):
        return model.get_compile_config()
    return compile_config(model)


def model_compile_from_config(model, config, custom_objects, source):
    """Compile a loaded model from its saved ``compile_config``: through the
    model's own ``compile_from_config(config)`` when its class defines one
    (as Keras calls it), else :func:`compile_from_config`.

    Returns:
        True if the model was compiled.
    """
    if callable(getattr(model, "compile_from_config", None)):
        from minikeras._support.object_registration import custom_object_scope

        with custom_object_scope(custom_objects or {}):
            model.compile_from_config(config)
        return getattr(model, "optimizer", None) is not None
    return compile_from_config(model, config, custom_objects, source)


def _accepted(cls, config):
    """``config`` without the keys ``cls`` does not take (Keras adds e.g. ``dtype`` to losses)."""
    parameters = inspect.signature(cls.__init__).parameters
    if any(p.kind == p.VAR_KEYWORD for p in parameters.values()):
        return config
    return {key: value for key, value in config.items() if key in parameters}


def _registered_function(*names):
    for name in names:
        found = object_registration.registered_objects().get(name) if isinstance(name, str) else None
        if callable(found) and not isinstance(found, type):
            return found
    return None


def _decode(value, kind, custom_objects, source):
    from minikeras import losses, metrics

    if isinstance(value, list):
        return [_decode(item, kind, custom_objects, source) for item in value]
    if not isinstance(value, dict):
        return value
    if "class_name" not in value:
        return {key: _decode(item, kind, custom_objects, source) for key, item in value.items()}
    custom_objects = custom_objects or {}
    if value["class_name"] == "function":
        name = value.get("config")
        found = custom_objects.get(value.get("registered_name")) or custom_objects.get(name)
        # An explicit allow-list (losses and metric functions, registered
        # ones): never an attribute looked up by a name the file chose.
        found = found or _allowed_functions().get(name) or _registered_function(value.get("registered_name"), name)
        if found is None:
            raise ValueError(f"Unknown function '{name}' in the compile config of {source}. Pass it when loading: "
                             f"load_model(path, custom_objects={{'{name}': {name}}}), or load with compile=False.")
        return found
    name = value.get("registered_name") or value["class_name"]
    module = value.get("module") or ""
    registry = metrics.ALL_OBJECTS if (kind == "metric" or "metrics" in module) else losses.ALL_OBJECTS
    cls = custom_objects.get(name) or custom_objects.get(value["class_name"]) or registry.get(value["class_name"])
    if cls is None:
        registered = object_registration.registered_objects().get(name)
        cls = registered if isinstance(registered, type) else None
    if cls is None:
        raise ValueError(f"Unknown {kind} class '{name}' in the compile config of {source}: pass it in "
                         "custom_objects, or load with compile=False.")
    return cls(**_accepted(cls, dict(value.get("config") or {})))


def _drop_tf_keras_2_optimizer_arguments(config, source):
    """tf.keras 2 optimizers had arguments Keras 3 dropped; they are dropped when they change nothing."""
    for key in ("is_legacy_optimizer", "jit_compile"):
        config.pop(key, None)
    if "decay" in config:
        if config["decay"]:
            raise ValueError(f"The optimizer in {source} uses tf.keras 2's decay={config['decay']}, which Keras 3 "
                             "and minikeras replaced by learning-rate schedules; load with compile=False.")
        config.pop("decay")
    if "lr" in config and "learning_rate" not in config:
        config["learning_rate"] = config.pop("lr")


def _metric_names(value):
    """tf.keras 2 wrote metrics as ``MeanMetricWrapper`` configs naming their function: use the name."""
    if isinstance(value, list):
        return [_metric_names(item) for item in value]
    if isinstance(value, dict) and value.get("class_name") == "MeanMetricWrapper":
        from minikeras import metrics

        config = value.get("config") or {}
        name, function = config.get("name"), config.get("fn")
        return name if name in metrics.ALL_OBJECTS or not isinstance(function, str) else function
    return value


def compile_from_config(model, config, custom_objects, source):
    """``model.compile(...)`` from a Keras 3 ``compile_config`` or a tf.keras ``training_config``.

    Returns:
        True if the model was compiled (the config names an optimizer).
    """
    from minikeras import optimizers

    optimizer_spec = config.get("optimizer") or config.get("optimizer_config")
    if not optimizer_spec:
        return False
    if isinstance(optimizer_spec, dict):
        optimizer_spec = {"class_name": optimizer_spec["class_name"],
                          "config": dict(optimizer_spec.get("config") or {})}
        _drop_tf_keras_2_optimizer_arguments(optimizer_spec["config"], source)
    optimizer = optimizers.deserialize(optimizer_spec, custom_objects)
    loss, loss_weights = config.get("loss"), config.get("loss_weights")
    metrics = _metric_names(config.get("metrics"))
    if len(getattr(model, "outputs", None) or [None]) == 1:
        # Keras stores a single output's loss as a list of one, tf.keras 2 its metrics as a list of lists.
        loss = loss[0] if isinstance(loss, list) and len(loss) == 1 else loss
        loss_weights = loss_weights[0] if isinstance(loss_weights, list) and len(loss_weights) == 1 else loss_weights
        metrics = metrics[0] if isinstance(metrics, list) and len(metrics) == 1 and isinstance(metrics[0], list) \
            else metrics
    arguments = {"optimizer": optimizer,
                 "loss": _decode(loss, "loss", custom_objects, source),
                 "metrics": _decode(metrics, "metric", custom_objects, source),
                 "loss_weights": loss_weights}
    if config.get("weighted_metrics"):
        arguments["weighted_metrics"] = _decode(config["weighted_metrics"], "metric", custom_objects, source)
    if isinstance(config.get("steps_per_execution"), int) and config["steps_per_execution"] > 1:
        arguments["steps_per_execution"] = config["steps_per_execution"]
    if config.get("jit_compile") is True:
        arguments["jit_compile"] = True
    model.compile(**arguments)
    return True


def restore_optimizer(model, state, learning_rate, source, warn, keras_order=True):
    """Put a saved optimizer state (step count first, then slots) into the compiled model's optimizer.

    The optimizer is built on the trainable weights in Keras's order (the
    order files hold slots in; minikeras's first files used
    ``model.trainable_weights``). A state that does not fit (another
    optimizer, other variables) is reported through ``warn`` and the
    optimizer starts fresh, as Keras does.
    """
    from minikeras.saving.keras_order import keras_trainable_order, state_from_order

    optimizer = model.optimizer
    variables = keras_trainable_order(model) if keras_order else model.trainable_weights
    try:
        if len(state) > 1:
            optimizer.build(variables)  # nothing happens if training built it already...
            state = state_from_order(optimizer, variables, state)  # ...in another order
        optimizer.set_state(state)
    except ValueError as error:
        warn(f"Could not restore the optimizer state saved in {source} ({error}); the optimizer starts "
             "fresh.")
        return
    current = getattr(optimizer, "_learning_rate", None)
    if learning_rate is not None and isinstance(current, (int, float)) and numpy.float32(current) != learning_rate:
        # The config holds the rate as a Python float (exact); the saved
        # variable is float32, and wins only when training changed it.
        try:
            optimizer.learning_rate = learning_rate
        except (TypeError, ValueError):
            pass  # a schedule: its value comes from the step count
