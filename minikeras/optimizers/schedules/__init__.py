"""Learning rate schedules (``minikeras.optimizers.schedules``), as in Keras.

A schedule is a callable ``schedule(step) -> float``; pass one as an
optimizer's ``learning_rate`` and the optimizer evaluates it at its
``iterations`` count before every update.

Example:
    >>> from minikeras.optimizers import SGD, schedules
    >>> schedule = schedules.ExponentialDecay(0.1, decay_steps=1000, decay_rate=0.96)
    >>> optimizer = SGD(learning_rate=schedule)
"""
from minikeras.optimizers.schedules.cosine_decay import CosineDecay
from minikeras.optimizers.schedules.cosine_decay_restarts import CosineDecayRestarts
from minikeras.optimizers.schedules.exponential_decay import ExponentialDecay
from minikeras.optimizers.schedules.inverse_time_decay import InverseTimeDecay
from minikeras.optimizers.schedules.learning_rate_schedule import LearningRateSchedule
from minikeras.optimizers.schedules.piecewise_constant_decay import PiecewiseConstantDecay
from minikeras.optimizers.schedules.polynomial_decay import PolynomialDecay

__all__ = [
    "LearningRateSchedule", "ExponentialDecay", "PiecewiseConstantDecay", "PolynomialDecay", "InverseTimeDecay",
    "CosineDecay", "CosineDecayRestarts", "serialize", "deserialize",
]

_BUILT_IN = {
    cls.__name__: cls
    for cls in (ExponentialDecay, PiecewiseConstantDecay, PolynomialDecay, InverseTimeDecay, CosineDecay,
                CosineDecayRestarts)
}


def serialize(learning_rate_schedule):
    """A schedule as a JSON-friendly dict ``{"class_name", "config", ...}``.

    Args:
        learning_rate_schedule: a LearningRateSchedule.

    Returns:
        ``{"module", "class_name", "config", "registered_name"}``, the
        Keras 3 layout.
    """
    if not isinstance(learning_rate_schedule, LearningRateSchedule):
        raise TypeError(
            f"serialize expects a LearningRateSchedule, received {type(learning_rate_schedule).__name__}."
        )
    return {
        "module": "minikeras.optimizers.schedules",
        "class_name": type(learning_rate_schedule).__name__,
        "config": learning_rate_schedule.get_config(),
        "registered_name": None,
    }


def deserialize(config, custom_objects=None):
    """Make a schedule from the output of :func:`serialize`.

    Args:
        config: ``{"class_name": str, "config": dict}``.
        custom_objects: optional ``{name: class}`` for user schedules.

    Returns:
        A LearningRateSchedule.

    Raises:
        ValueError: for an unknown class name or a malformed config.
    """
    if not isinstance(config, dict) or "class_name" not in config:
        raise ValueError(f"deserialize expects a dict with 'class_name' and 'config', received {config!r}.")
    class_name = config["class_name"]
    known = dict(_BUILT_IN)
    known.update(custom_objects or {})
    if class_name not in known:
        raise ValueError(
            f"Unknown learning rate schedule {class_name!r}; known schedules: {sorted(known)}. "
            "Pass custom schedules through `custom_objects`."
        )
    return known[class_name].from_config(dict(config.get("config", {})))
