"""The checks of ``compile``/``fit``/``evaluate``/``predict``'s keywords, before any work.

Keras takes these keywords as they come; a wrong one then fails deep in
the loop (``fit(initial_epoch=1.5)``: "'float' object cannot be interpreted
as an integer"), or worse, is read by its truth value and trains on
(``fit(shuffle="no")`` shuffles; a negative class weight reports an accuracy
of -1.375). Each check here refuses such a value with the library's
ValueError/TypeError naming the method, the keyword, what it accepts and
what it received, and accepts everything Keras documents.
"""
import math
import numbers
import sys

import numpy

from minikeras._support.argument_validation import _describe, is_int, validate_flag, validate_int


def _int_at_least(method, name, value, minimum):
    """An int >= ``minimum`` (1 or 0); bools, floats and strings refused with ValueError, as before."""
    if not is_int(value) or value < minimum:
        bound = "positive" if minimum == 1 else "non-negative"
        raise ValueError(f"{method}: {name} must be a {bound} int, received {_describe(value)}.")
    return int(value)


def _positive_or_none(method, name, value):
    """A batch size: None or an int >= 1 (ValueError otherwise, as the data adapter says)."""
    return None if value is None else _int_at_least(method, name, value, 1)


def _steps_or_none(method, name, value):
    """A step count: None or an int >= 1 (TypeError for a non-int, as before)."""
    return None if value is None else validate_int(method, name, value, minimum=1)


def check_verbose(method, verbose):
    """``verbose`` as 0, 1 or 2 (``"auto"`` is 1, a bool its int)."""
    if verbose == "auto" and isinstance(verbose, str):
        return 1
    if isinstance(verbose, (bool, numpy.bool_)) or (is_int(verbose) and verbose in (0, 1, 2)):
        return int(verbose)
    raise ValueError(f"{method}: verbose must be 'auto', 0, 1 or 2, received {_describe(verbose)}.")


def _is_real(value):
    return isinstance(value, numbers.Real) and not isinstance(value, (bool, numpy.bool_))


def check_class_weight(class_weight):
    """``class_weight`` as ``{class index: weight}`` with finite, non-negative weights (or None)."""
    if class_weight is None:
        return None
    if not isinstance(class_weight, dict):
        raise TypeError(f"fit: class_weight must be a dict {{class index: weight}}, received "
                        f"{type(class_weight).__name__} {_describe(class_weight)}.")
    for key, weight in class_weight.items():
        if not is_int(key):
            raise TypeError(f"fit: class_weight keys must be class indices (ints), received {_describe(key)}.")
        if not _is_real(weight) or not math.isfinite(weight) or weight < 0:
            raise ValueError(f"fit: class_weight[{key}] must be a finite number >= 0, received {_describe(weight)} "
                             "(a negative weight would reward the loss it should penalise).")
    return class_weight


def check_fit(batch_size, epochs, verbose, shuffle, class_weight, validation_split, initial_epoch, steps_per_epoch,
              validation_steps, validation_batch_size, validation_freq):
    """Check ``fit``'s keywords; returns ``verbose`` as an int.

    Raises:
        TypeError, ValueError: naming ``fit`` and the keyword.
    """
    _positive_or_none("fit", "batch_size", batch_size)
    _int_at_least("fit", "epochs", epochs, 0)
    verbose = check_verbose("fit", verbose)
    if not (isinstance(shuffle, str) and shuffle == "batch"):
        try:
            validate_flag("fit", "shuffle", shuffle)
        except TypeError:
            raise TypeError(f"fit: shuffle must be a bool or 'batch', received {_describe(shuffle)}.") from None
    check_class_weight(class_weight)
    if validation_split is not None and validation_split is not False:
        if not _is_real(validation_split) or not 0 <= validation_split < 1:
            raise ValueError(f"fit: validation_split must be a number in [0, 1), received "
                             f"{_describe(validation_split)}.")
    _int_at_least("fit", "initial_epoch", initial_epoch, 0)
    _steps_or_none("fit", "steps_per_epoch", steps_per_epoch)
    _steps_or_none("fit", "validation_steps", validation_steps)
    _positive_or_none("fit", "validation_batch_size", validation_batch_size)
    _int_at_least("fit", "validation_freq", validation_freq, 1)
    return verbose


def check_evaluate(batch_size, verbose, steps, return_dict):
    """Check ``evaluate``'s keywords; returns ``verbose`` as an int."""
    _positive_or_none("evaluate", "batch_size", batch_size)
    _steps_or_none("evaluate", "steps", steps)
    validate_flag("evaluate", "return_dict", return_dict)
    return check_verbose("evaluate", verbose)


def check_predict(batch_size, verbose, steps):
    """Check ``predict``'s keywords; returns ``verbose`` as an int."""
    _positive_or_none("predict", "batch_size", batch_size)
    _steps_or_none("predict", "steps", steps)
    return check_verbose("predict", verbose)


def _check_metric_list(name, value):
    """A list/tuple/dict (nested per output) of names, Metric objects or functions."""
    if value is None:
        return
    if not isinstance(value, (list, tuple, dict)):
        raise TypeError(f"compile: {name} must be a list, a tuple or a dict (one entry per output), received "
                        f"{type(value).__name__} {_describe(value)}.")
    for item in value.values() if isinstance(value, dict) else value:
        if isinstance(item, (list, tuple, dict)):
            _check_metric_list(name, item)
        elif not (item is None or isinstance(item, str) or callable(item) or hasattr(item, "update_state")):
            raise TypeError(f"compile: {name} entries must be metric names, Metric objects or functions, "
                            f"received {type(item).__name__} {_describe(item)}.")


def _check_loss_weight(weight):
    if not _is_real(weight):
        raise TypeError(f"compile: loss_weights must be a number (or one per output), received "
                        f"{type(weight).__name__} {_describe(weight)}.")
    if not math.isfinite(weight) or weight < 0:
        raise ValueError(f"compile: loss_weights must hold finite numbers >= 0, received {_describe(weight)}.")


def check_compile(loss_weights, metrics, weighted_metrics, run_eagerly, steps_per_execution, jit_compile):
    """Check ``compile``'s keywords (the optimizer and losses are resolved by name where they are used).

    Raises:
        TypeError, ValueError: naming ``compile`` and the keyword.
    """
    _check_metric_list("metrics", metrics)
    _check_metric_list("weighted_metrics", weighted_metrics)
    if loss_weights is not None:
        if isinstance(loss_weights, dict):
            weights = list(loss_weights.values())
        elif isinstance(loss_weights, (list, tuple)):
            weights = list(loss_weights)
        else:
            weights = [loss_weights]
        for weight in weights:
            _check_loss_weight(weight)
    if run_eagerly is not None:
        validate_flag("compile", "run_eagerly", run_eagerly)
    if steps_per_execution is not None:  # batches are grouped with itertools.islice, which stops at sys.maxsize
        validate_int("compile", "steps_per_execution", steps_per_execution, minimum=1, maximum=sys.maxsize)
    if jit_compile is not None and not (isinstance(jit_compile, str) and jit_compile == "auto"):
        try:
            validate_flag("compile", "jit_compile", jit_compile)
        except TypeError:
            raise TypeError(f"compile: jit_compile must be a bool or 'auto', received {_describe(jit_compile)}.") \
                from None
