"""Keras's debugging caps on training runs: ``config.set_max_epochs`` and
``config.set_max_steps_per_epoch`` (also read from the ``KERAS_MAX_EPOCHS``
and ``KERAS_MAX_STEPS_PER_EPOCH`` environment variables, as Keras does), so
a script can be run end to end quickly without editing it.

``fit`` caps its epochs, and every fit/evaluate/predict data pass its steps,
with a warning saying so (``data/data_adapter.make_data`` and
``models/training.py``).
"""
import os

_limits = {"max_epochs": None, "max_steps_per_epoch": None}
for _name, _variable in (("max_epochs", "KERAS_MAX_EPOCHS"), ("max_steps_per_epoch", "KERAS_MAX_STEPS_PER_EPOCH")):
    if os.environ.get(_variable):
        _limits[_name] = int(os.environ[_variable])


def _checked(name, value):
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
        raise ValueError(f"{name} must be a positive int or None, received {value!r}.")
    return value


def set_max_epochs(max_epochs):
    """Cap the epochs of every ``fit`` (None: no cap). For debugging runs."""
    _limits["max_epochs"] = _checked("max_epochs", max_epochs)


def set_max_steps_per_epoch(max_steps_per_epoch):
    """Cap the steps of every epoch of fit/evaluate/predict (None: no cap)."""
    _limits["max_steps_per_epoch"] = _checked("max_steps_per_epoch", max_steps_per_epoch)


def max_epochs():
    """The cap set by ``set_max_epochs`` or ``KERAS_MAX_EPOCHS`` (None: none)."""
    return _limits["max_epochs"]


def max_steps_per_epoch():
    """The cap set by ``set_max_steps_per_epoch`` or ``KERAS_MAX_STEPS_PER_EPOCH`` (None: none)."""
    return _limits["max_steps_per_epoch"]
