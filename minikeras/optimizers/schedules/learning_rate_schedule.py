"""LearningRateSchedule: the base class of learning rate schedules."""
import functools
import numbers

import numpy

from minikeras.autograd import Tensor


class LearningRateSchedule:
    """A learning rate that changes with the optimizer step.

    Pass an instance as the ``learning_rate`` of any optimizer; the optimizer
    calls it with its ``iterations`` count before every update. A subclass
    implements ``__call__(step)`` (returning a Python float) and
    ``get_config()``; ``from_config`` then works unchanged.

    Example:
        >>> class OneOverStep(LearningRateSchedule):
        ...     def __init__(self, initial_learning_rate):
        ...         self.initial_learning_rate = initial_learning_rate
        ...     def __call__(self, step):
        ...         return self.initial_learning_rate / (step + 1)
        ...     def get_config(self):
        ...         return {"initial_learning_rate": self.initial_learning_rate}
        >>> OneOverStep(0.1)(4)
        0.02
    """

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "__call__" in cls.__dict__:
            cls.__call__ = _elementwise_over_steps(cls.__dict__["__call__"])

    def __call__(self, step):
        raise NotImplementedError(f"Learning rate schedule '{type(self).__name__}' must override `__call__(self, step)`.")

    def get_config(self):
        """The constructor arguments, as a JSON-friendly dict."""
        raise NotImplementedError(
            f"Learning rate schedule '{type(self).__name__}' must override `get_config()` in order to be serializable."
        )

    @classmethod
    def from_config(cls, config):
        """Make a schedule from the output of ``get_config()``."""
        return cls(**config)

    def __repr__(self):
        try:
            arguments = ", ".join(f"{key}={value!r}" for key, value in self.get_config().items())
        except NotImplementedError:
            arguments = ""
        return f"{type(self).__name__}({arguments})"


def _elementwise_over_steps(call):
    """Wraps a scalar ``__call__(step)`` so that an array or Tensor of steps
    (``schedule(numpy.arange(1000))``, as Keras allows) gives a float64 NumPy
    array of the same shape; a single step still gives a float."""

    @functools.wraps(call)
    def wrapper(self, step):
        if isinstance(step, Tensor):
            if step.size == 1:
                return call(self, step)
            step = step.numpy()
        if getattr(step, "ndim", 0) > 0 or isinstance(step, (list, tuple)):
            steps = numpy.asarray(step)
            if steps.size != 1 or isinstance(step, (list, tuple)):
                if steps.dtype.kind not in "iuf":
                    raise TypeError(f"{type(self).__name__} expects numeric steps, received dtype {steps.dtype}.")
                values = [call(self, value) for value in steps.reshape(-1).tolist()]
                return numpy.asarray(values, dtype=numpy.float64).reshape(steps.shape)
        return call(self, step)

    return wrapper


def step_value(step, schedule_name):
    """The optimizer step as a Python float (accepts ints, NumPy scalars,
    one-element arrays and Tensors)."""
    if isinstance(step, Tensor):
        step = step.item()
    elif hasattr(step, "item") and getattr(step, "size", 1) == 1:
        step = step.item()
    if isinstance(step, bool) or not isinstance(step, numbers.Real):
        raise TypeError(f"{schedule_name} expects the step to be a number, received {step!r}.")
    return float(step)


def check_number(schedule_name, argument, value):
    """Raise TypeError unless ``value`` is a real number (not a bool)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{schedule_name} expects `{argument}` to be a number, received {value!r}.")


def check_positive(schedule_name, argument, value):
    """Raise ValueError unless ``value`` is a number > 0."""
    check_number(schedule_name, argument, value)
    if not value > 0:
        raise ValueError(f"{schedule_name}: argument `{argument}` must be > 0. Received: {argument}={value!r}")
