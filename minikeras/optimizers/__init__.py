"""Optimizers (``minikeras.optimizers``), with Keras 3 names, defaults and math.

Example:
    >>> import minikeras as mk
    >>> optimizer = mk.optimizers.get("adam")          # Adam with its defaults
    >>> optimizer = mk.optimizers.SGD(learning_rate=0.1, momentum=0.9, nesterov=True)
    >>> optimizer.apply_gradients([(w.grad, w) for w in weights])  # doctest: +SKIP
"""
from minikeras.optimizers import schedules
from minikeras.optimizers.adadelta import Adadelta
from minikeras.optimizers.adafactor import Adafactor
from minikeras.optimizers.ftrl import Ftrl
from minikeras.optimizers.lamb import Lamb
from minikeras.optimizers.lion import Lion
from minikeras.optimizers.muon import Muon
from minikeras.optimizers.schedule_free_adamw import ScheduleFreeAdamW
from minikeras.optimizers.adagrad import Adagrad
from minikeras.optimizers.adam import Adam
from minikeras.optimizers.adamax import Adamax
from minikeras.optimizers.adamw import AdamW
from minikeras.optimizers.loss_scale_optimizer import LossScaleOptimizer
from minikeras.optimizers.multi_optimizer import MultiOptimizer, OptimizerMap
from minikeras.optimizers.nadam import Nadam
from minikeras.optimizers.optimizer import Optimizer
from minikeras.optimizers.rmsprop import RMSprop
from minikeras.optimizers.sgd import SGD

__all__ = [
    "Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta", "Nadam", "Adamax",
    "schedules", "get", "serialize", "deserialize",
    "LossScaleOptimizer",
]
__all__ += ["Lion", "Lamb", "Ftrl", "Adafactor", "Muon", "ScheduleFreeAdamW"]
__all__ += ["MultiOptimizer", "OptimizerMap"]

# Lower-case class name -> class; names are matched case-insensitively, as in Keras.
_BUILT_IN = {cls.__name__.lower(): cls for cls in (SGD, Adam, AdamW, RMSprop, Adagrad, Adadelta, Nadam, Adamax)}
_BUILT_IN["lossscaleoptimizer"] = LossScaleOptimizer

_BUILT_IN.update({cls.__name__.lower(): cls for cls in (Lion, Lamb, Ftrl, Adafactor, Muon, ScheduleFreeAdamW)})
_BUILT_IN["multioptimizer"] = MultiOptimizer


def serialize(optimizer):
    """An optimizer's configuration as a JSON-friendly dict (no state).

    Args:
        optimizer: an Optimizer.

    Returns:
        ``{"module", "class_name", "config", "registered_name"}``, the
        Keras 3 layout.
    """
    if not isinstance(optimizer, Optimizer):
        raise TypeError(f"serialize expects an Optimizer, received {type(optimizer).__name__}.")
    return {
        "module": "minikeras.optimizers",
        "class_name": type(optimizer).__name__,
        "config": optimizer.get_config(),
        "registered_name": None,
    }


def deserialize(config, custom_objects=None):
    """Make an optimizer from :func:`serialize` output.

    Args:
        config: ``{"class_name": str, "config": dict}``; built-in class names
            match case-insensitively.
        custom_objects: optional ``{name: class}`` for custom optimizers or
            schedules.

    Returns:
        A new Optimizer (without state).

    Raises:
        ValueError: for an unknown class name or a malformed config.
    """
    if not isinstance(config, dict) or "class_name" not in config:
        raise ValueError(f"deserialize expects a dict with 'class_name' and 'config', received {config!r}.")
    class_name = config["class_name"]
    custom_objects = custom_objects or {}
    if class_name in custom_objects:
        cls = custom_objects[class_name]
    elif isinstance(class_name, str) and class_name.lower() in _BUILT_IN:
        cls = _BUILT_IN[class_name.lower()]
    else:
        known = sorted(cls.__name__ for cls in _BUILT_IN.values())
        raise ValueError(f"Unknown optimizer {class_name!r}. Known optimizers: {', '.join(known)}.")
    return cls.from_config(dict(config.get("config") or {}), custom_objects=custom_objects)


def get(identifier):
    """An Optimizer from a name, a config dict or an instance.

    Args:
        identifier: ``"adam"`` / ``"Adam"`` (defaults), a :func:`serialize`
            dict, an Optimizer (returned as is), or None.

    Returns:
        An Optimizer, or None for None.

    Raises:
        ValueError: when the identifier cannot be interpreted.
    """
    if identifier is None:
        return None
    if isinstance(identifier, Optimizer):
        return identifier
    if isinstance(identifier, dict):
        return deserialize(identifier)
    if isinstance(identifier, str):
        return deserialize({"class_name": identifier, "config": {}})
    raise ValueError(f"Could not interpret optimizer identifier: {identifier!r}")
