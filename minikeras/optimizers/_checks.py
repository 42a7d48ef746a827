"""Argument checks and small helpers shared by the optimizers."""
import math
import numbers
import re

import numpy

from minikeras.backend.dtypes import is_float_dtype
from minikeras import backend
from minikeras.autograd import Tensor
from minikeras.optimizers.schedules import LearningRateSchedule


def camel_to_snake(name):
    """``"RMSprop"`` -> ``"rmsprop"``, ``"AdamW"`` -> ``"adam_w"``."""
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).lower()


def check_float_in_range(owner, argument, value, low=None, high=None, low_inclusive=True, allow_inf=False):
    """Raise TypeError unless ``value`` is a real number, ValueError unless it
    lies in ``[low, high]`` (``(low, high]`` when not ``low_inclusive``) and
    is finite (unless ``allow_inf``: an infinite clip threshold is no clip)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{owner}: argument `{argument}` must be a number, received {value!r}.")
    if value in (math.inf, -math.inf) and not allow_inf:
        raise ValueError(f"{owner}: argument `{argument}` must be finite. Received: {argument}={value!r}")
    too_low = low is not None and (value < low if low_inclusive else value <= low)
    too_high = high is not None and value > high
    if too_low or too_high or value != value:
        bracket = "[" if low_inclusive else "("
        interval = f"{bracket}{'-inf' if low is None else low}, {'inf' if high is None else high}]"
        raise ValueError(f"{owner}: argument `{argument}` must be in {interval}. Received: {argument}={value!r}")


def set_moment_arguments(optimizer, beta_1, beta_2, epsilon):
    """Check and store the beta_1 / beta_2 / epsilon of the Adam family."""
    owner = type(optimizer).__name__
    check_float_in_range(owner, "beta_1", beta_1, low=0.0, high=1.0)
    check_float_in_range(owner, "beta_2", beta_2, low=0.0, high=1.0)
    check_float_in_range(owner, "epsilon", epsilon, low=0.0)
    optimizer.beta_1, optimizer.beta_2, optimizer.epsilon = beta_1, beta_2, epsilon


def moment_config(optimizer):
    """The beta_1 / beta_2 / epsilon entries of a get_config()."""
    return {"beta_1": optimizer.beta_1, "beta_2": optimizer.beta_2, "epsilon": optimizer.epsilon}


def checked_learning_rate(owner, learning_rate):
    """A schedule or callable as is; a number (also a NumPy scalar or a
    one-element array/Tensor) as a Python float; ValueError otherwise."""
    if isinstance(learning_rate, LearningRateSchedule) or (
        callable(learning_rate) and not isinstance(learning_rate, Tensor)
    ):
        return learning_rate
    if isinstance(learning_rate, Tensor) or (backend.is_array(learning_rate) and learning_rate.size == 1):
        learning_rate = learning_rate.item()
    elif isinstance(learning_rate, numpy.generic):
        learning_rate = learning_rate.item()
    if isinstance(learning_rate, numbers.Real) and not isinstance(learning_rate, bool) and not (
            0 <= learning_rate < math.inf):
        # nan or inf turn every weight into nan at the first step; a negative
        # rate climbs the loss (refused as PyTorch does).
        raise ValueError(f"{owner}: argument `learning_rate` must be a finite number >= 0. "
                         f"Received: learning_rate={learning_rate!r}")
    if isinstance(learning_rate, bool) or not isinstance(learning_rate, numbers.Real):
        raise ValueError(
            f"{owner}: argument `learning_rate` should be a float, an instance of LearningRateSchedule, or a "
            "callable (that takes no arguments and returns the learning rate). "
            f"Received instead: learning_rate={learning_rate!r}"
        )
    return float(learning_rate)


def check_variable(owner, variable, index):
    """Raise TypeError unless ``variable`` is a floating-point Tensor."""
    if not isinstance(variable, Tensor):
        raise TypeError(
            f"{owner} updates minikeras Tensors; variable {index} is a {type(variable).__name__}. "
            "Wrap it: minikeras.Tensor(array, requires_grad=True)."
        )
    if not is_float_dtype(variable.dtype):
        raise TypeError(f"{owner} can only update floating-point variables; variable {index} has dtype {variable.dtype}.")


def describe(variable):
    """``'kernel' (shape (4, 3))`` for error messages."""
    name = getattr(variable, "name", None)
    shape = getattr(variable, "shape", None)
    return f"'{name}' (shape {shape})" if name else f"of shape {shape}"


def update_moments(xp, gradient, momentum, velocity, work, beta_1, beta_2):
    """Adam's moving averages, in place: ``m += (1 - beta_1)(g - m)`` and
    ``v += (1 - beta_2)(g**2 - v)`` (``work`` is scratch of the same shape)."""
    xp.subtract(gradient, momentum, out=work)
    work *= 1.0 - beta_1
    momentum += work
    xp.multiply(gradient, gradient, out=work)
    work -= velocity
    work *= 1.0 - beta_2
    velocity += work
