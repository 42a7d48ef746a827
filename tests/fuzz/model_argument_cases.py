"""Keyword fuzzing of ``compile``, ``fit``, ``evaluate`` and ``predict`` (issue 27).

A small compiled classifier is called with one keyword replaced by each of
argument_cases.FUZZ_VALUES (and a few values of its own, such as a negative
class weight); :data:`VALID` says what Keras accepts for each keyword. An
accepted ``compile`` is followed by one epoch of ``fit``, so a value that is
taken and only fails later counts. Outcomes as in argument_cases.py, except
that a clean error is the library's own ValueError/TypeError (raised by a
minikeras check) naming the keyword or the method.
"""
import contextlib
import io
import math

import numpy

import minikeras as mk
from argument_cases import FUZZ_VALUES, HUGE, _is_int, _is_real
from fuzz_cases import raw_site
from minikeras._support.argument_validation import _raised_by_library_check


def _positive_int_or_none(value):
    return value is None or (_is_int(value) and value >= 1)


def _non_negative_int(value):
    return _is_int(value) and value >= 0


def _flag(value):
    """A bool; the ints 0 and 1 either way (NumPy and the ops take them)."""
    if isinstance(value, (bool, numpy.bool_)):
        return True
    return None if _is_int(value) and value in (0, 1) else False


def _verbose(value):
    if isinstance(value, str):
        return value == "auto"
    return (_is_int(value) and value in (0, 1, 2)) or _flag(value) is True


def _class_weight(value):
    return value is None or (isinstance(value, dict) and all(
        _is_int(key) and _is_real(weight) and math.isfinite(weight) and weight >= 0 for key, weight in value.items()))


def _split(value):
    return None if value is None or value is False else _is_real(value) and 0 <= value < 1


def _optimizer(value):
    return isinstance(value, str) and value in ("sgd", "adam", "rmsprop") or isinstance(value, mk.optimizers.Optimizer)


def _loss(value):
    return isinstance(value, str) and value in ("mse", "categorical_crossentropy") or callable(value)


def _metrics(value):
    return value is None or isinstance(value, (list, tuple)) and all(
        isinstance(item, str) and item in ("accuracy", "mae") for item in value)


def _loss_weights(value):
    items = value if isinstance(value, (list, tuple)) else [value]
    return value is None or (len(items) == 1 and all(_is_real(v) and math.isfinite(v) and v >= 0 for v in items))


# method -> keyword -> (what Keras accepts: True, False, or None where either
# outcome is right; extra values to try)
VALID = {
    "fit": {
        "batch_size": (_positive_int_or_none, ()),
        "epochs": (_non_negative_int, ()),
        "verbose": (_verbose, ("auto",)),
        "shuffle": (lambda v: True if isinstance(v, str) and v == "batch" else _flag(v), ("batch",)),
        "class_weight": (_class_weight, ({0: -1.0, 1: 1.0}, {0: "a", 1: 1.0}, {0: float("nan"), 1: 1.0},
                                         {0: 1.0, 1: 2.0}, {"a": 1.0})),
        "validation_split": (_split, (0.25, 1.0)),
        "initial_epoch": (_non_negative_int, ()),
        "steps_per_epoch": (_positive_int_or_none, ()),
        "validation_steps": (_positive_int_or_none, ()),
        "validation_batch_size": (_positive_int_or_none, ()),
        "validation_freq": (lambda v: _is_int(v) and v >= 1, ()),
    },
    "evaluate": {
        "batch_size": (_positive_int_or_none, ()),
        "verbose": (_verbose, ("auto",)),
        "steps": (_positive_int_or_none, ()),
        "return_dict": (_flag, ()),
    },
    "predict": {
        "batch_size": (_positive_int_or_none, ()),
        "verbose": (_verbose, ("auto",)),
        "steps": (_positive_int_or_none, ()),
    },
    "compile": {
        "optimizer": (_optimizer, ("sgd", "adam")),
        "loss": (_loss, ("mse", "categorical_crossentropy")),
        "metrics": (_metrics, (["accuracy"], ["a"], "accuracy")),
        "loss_weights": (_loss_weights, (0.5, [0.5], -1.0, ["a"])),
        "run_eagerly": (lambda v: True if v is None else _flag(v), ()),
        "steps_per_execution": (_positive_int_or_none, ()),
        "jit_compile": (lambda v: True if v is None or v == "auto" else _flag(v), ("auto",)),
        "weighted_metrics": (_metrics, (["accuracy"],)),
    },
}
# Values that are valid but would make a call run for ever (epochs=10**12).
_TOO_LONG = {("fit", "epochs"): (HUGE,), ("fit", "steps_per_epoch"): (HUGE,), ("evaluate", "steps"): (HUGE,),
             ("predict", "steps"): (HUGE,), ("fit", "validation_steps"): (HUGE,),
             ("fit", "initial_epoch"): (-HUGE,)}  # refused now; before the fix, 10**12 epochs

_X = numpy.linspace(-1, 1, 32).astype("float32").reshape(8, 4)
_Y = numpy.eye(2, dtype="float32")[numpy.arange(8) % 2]


def _model():
    mk.random.seed(0)
    model = mk.Sequential([mk.layers.Dense(2, activation="softmax", input_shape=(4,))])
    model.compile(optimizer="sgd", loss="categorical_crossentropy", metrics=["accuracy"])
    return model


def _call(method, keyword, value):
    model = _model()
    if method == "compile":
        model.compile(**{"optimizer": "sgd", "loss": "categorical_crossentropy", keyword: value})
        return model.fit(_X, _Y, batch_size=4, epochs=1, verbose=0)
    kwargs = {"fit": {"batch_size": 4, "epochs": 1, "verbose": 0, "validation_data": (_X, _Y)},
              "evaluate": {"batch_size": 4, "verbose": 0}, "predict": {"batch_size": 4, "verbose": 0}}[method]
    kwargs[keyword] = value
    if method == "predict":
        return model.predict(_X, **kwargs)
    return getattr(model, method)(_X, _Y, **kwargs)


def cases():
    """``(method, keyword, value, must refuse)`` for every fuzzed call."""
    for method, keywords in VALID.items():
        for keyword, (valid, extra) in keywords.items():
            for value in FUZZ_VALUES + tuple(extra):
                if value in _TOO_LONG.get((method, keyword), ()) and not isinstance(value, bool):
                    continue
                yield method, keyword, value, valid(value) is False  # None: either outcome is right


def classify_call(method, keyword, value, refuse):
    """Run one fuzzed call; return ``(outcome, detail, site)``."""
    import warnings

    try:
        with warnings.catch_warnings(), numpy.errstate(all="ignore"), \
                contextlib.redirect_stdout(io.StringIO()):  # progress bars of verbose=1
            warnings.simplefilter("ignore")
            _call(method, keyword, value)
    except (ValueError, TypeError) as error:
        message = str(error)
        if _raised_by_library_check(error) and (keyword in message or method in message):
            return "clean", f"{type(error).__name__}: {message}", None
        return "leak", f"{type(error).__name__}: {message[:160]}", raw_site(error)
    except Exception as error:  # noqa: BLE001 - classifying is the point
        return "leak", f"{type(error).__name__}: {str(error)[:160]}", raw_site(error)
    if refuse:
        return "wrong", "accepted", None
    return "ok", "", None
