"""The fuzz catalogue shared by the property test and ``run_fuzz.py``.

Each *target* is a public entry (op, layer, loss, metric, optimizer) called
on one generated input. :func:`classify` runs a call and files its outcome:

- ``ok``: a result, equal to the NumPy reference where there is one;
- ``clean``: the library's own ValueError/TypeError whose message names
  the entry point;
- ``leak``: any other exception, or a ValueError/TypeError that does not
  name the entry (a raw NumPy/Python error escaping);
- ``wrong``: a result where the input must be refused (object, string or
  None data), a result that differs from NumPy's, or NaN where NumPy gives
  a number.
"""
import math
import re
import warnings

import numpy

import minikeras as mk

KINDS = ("float16", "float32", "float64", "int32", "int64", "bool", "complex64",
         "object", "str", "nan", "empty", "number", "none")


def make_input(kind, shape, rng):
    """A host value of ``kind`` (one of :data:`KINDS`) and ``shape``."""
    if kind == "empty":
        return numpy.zeros(shape[:-1] + (0,) if shape else (0,), dtype="float32")
    if kind == "number":
        return float(rng.uniform(-2, 2))
    if kind == "none":
        return None
    values = rng.uniform(-2, 2, size=shape)
    if kind == "nan":
        values = values.astype("float32")
        if values.size:
            values.flat[0] = numpy.nan
        return values
    if kind == "bool":
        return values > 0
    if kind.startswith("int"):
        return numpy.round(values * 3).astype(kind)
    if kind == "complex64":
        return (values + 1j * values[::-1] if values.ndim else values + 0.5j).astype(kind)
    if kind == "object":
        data = values.astype(object)
        if data.size:
            data.flat[0] = None
        return data
    if kind == "str":
        return values.astype(str)
    return values.astype(kind)


def _np(x):
    return numpy.asarray(x)


def _softmax(x, axis=-1):
    if x.size == 0:
        return x.copy()  # an empty axis: an empty answer (Keras 3's, on every backend)
    shifted = x - numpy.max(x, axis=axis, keepdims=True)
    e = numpy.exp(shifted)
    return e / e.sum(axis=axis, keepdims=True)


def _relu(x):
    if x.dtype == bool:
        raise TypeError("relu on bool")
    return numpy.maximum(x, 0)


def _sigmoid(x):
    if x.dtype == bool:
        raise TypeError("sigmoid on bool")
    return 1.0 / (1.0 + numpy.exp(-x))


def _neg(x):
    return numpy.negative(x)


def _var(x):
    return numpy.var(x)


# name -> (callable on the input, NumPy reference or None, ops that must not
# return results for bools/complex even if NumPy computes something)
OP_TARGETS = {
    "relu": (lambda x: mk.ops.relu(x), _relu),
    "negative": (lambda x: mk.ops.negative(x), _neg),
    "abs": (lambda x: mk.ops.abs(x), numpy.abs),
    "exp": (lambda x: mk.ops.exp(x), numpy.exp),
    "sqrt": (lambda x: mk.ops.sqrt(x), numpy.sqrt),
    "square": (lambda x: mk.ops.square(x), numpy.square),
    "sigmoid": (lambda x: mk.ops.sigmoid(x), _sigmoid),
    "tanh": (lambda x: mk.ops.tanh(x), numpy.tanh),
    "softmax": (lambda x: mk.ops.softmax(x), _softmax),
    "sum": (lambda x: mk.ops.sum(x), numpy.sum),
    "mean": (lambda x: mk.ops.mean(x), numpy.mean),
    "var": (lambda x: mk.ops.var(x), _var),
    "std": (lambda x: mk.ops.std(x), numpy.std),
    "max": (lambda x: mk.ops.max(x), numpy.max),
    "argmax": (lambda x: mk.ops.argmax(x), numpy.argmax),
    "reshape": (lambda x: mk.ops.reshape(x, (-1,)), lambda x: numpy.reshape(x, (-1,))),
    "transpose": (lambda x: mk.ops.transpose(x), numpy.transpose),
    "expand_dims": (lambda x: mk.ops.expand_dims(x, 0), lambda x: numpy.expand_dims(x, 0)),
    "cast": (lambda x: mk.ops.cast(x, "float64"), lambda x: numpy.asarray(x).astype("float64")),
    "add": (lambda x: mk.ops.add(x, x), lambda x: numpy.add(x, x)),
    "multiply": (lambda x: mk.ops.multiply(x, 2), lambda x: numpy.multiply(x, 2)),
    "clip": (lambda x: mk.ops.clip(x, -1, 1), lambda x: numpy.clip(x, -1, 1)),
    "tensor": (lambda x: mk.tensor(x), None),
    "zeros_like": (lambda x: mk.ops.zeros_like(x), numpy.zeros_like),
    "log": (lambda x: mk.ops.log(x), numpy.log),
    "log_softmax": (lambda x: mk.ops.log_softmax(x), None),
    "logsumexp": (lambda x: mk.ops.logsumexp(x), None),
    "min": (lambda x: mk.ops.min(x), numpy.min),
    "prod": (lambda x: mk.ops.prod(x), numpy.prod),
    "argmin": (lambda x: mk.ops.argmin(x), numpy.argmin),
    "squeeze": (lambda x: mk.ops.squeeze(x), numpy.squeeze),
    "flatten": (lambda x: mk.ops.flatten(x), numpy.ravel),
    "tile": (lambda x: mk.ops.tile(x, 2), lambda x: numpy.tile(x, 2)),
    "repeat": (lambda x: mk.ops.repeat(x, 2), lambda x: numpy.repeat(x, 2)),
    "maximum": (lambda x: mk.ops.maximum(x, 0.5), lambda x: numpy.maximum(x, 0.5)),
    "where": (lambda x: mk.ops.where(x, 1.0, 0.0), None),
    "matmul": (lambda x: mk.ops.matmul(x, x), lambda x: numpy.matmul(x, x)),
    "concatenate": (lambda x: mk.ops.concatenate([x, x]), lambda x: numpy.concatenate([x, x])),
    "stack": (lambda x: mk.ops.stack([x, x]), lambda x: numpy.stack([x, x])),
    "pad": (lambda x: mk.ops.pad(x, 1), lambda x: numpy.pad(x, 1)),
    "one_hot": (lambda x: mk.ops.one_hot(x, 3), None),
    "dropout": (lambda x: mk.ops.dropout(x, 0.5), None),
    "greater": (lambda x: mk.ops.greater(x, 0), lambda x: numpy.greater(x, 0)),
    "take": (lambda x: mk.ops.take(x, numpy.array([0]), axis=0), lambda x: numpy.take(x, [0], axis=0)),
    "max_pool2d": (lambda x: mk.ops.max_pool2d(x, 2, 1, "valid"), None),
    "conv2d": (lambda x: mk.ops.conv2d(x, numpy.ones((1, 1, numpy.shape(x)[-1] if numpy.ndim(x) else 1, 2),
                                                      dtype="float32")), None),
    "embedding": (lambda x: mk.ops.embedding(x, numpy.ones((3, 2), dtype="float32")), None),
    "sparse_softmax_cross_entropy": (lambda x: mk.ops.sparse_softmax_cross_entropy(
        x, numpy.zeros(numpy.shape(x)[:-1], dtype="int64")), None),
    "sigmoid_cross_entropy": (lambda x: mk.ops.sigmoid_cross_entropy(x, x), None),
    "softmax_cross_entropy": (lambda x: mk.ops.softmax_cross_entropy(x, x), None),
}


def _layer(name, factory):
    def call(x):
        return factory()(x)

    return call


LAYER_TARGETS = {
    "Dense": _layer("Dense", lambda: mk.layers.Dense(3)),
    "Flatten": _layer("Flatten", lambda: mk.layers.Flatten()),
    "LayerNormalization": _layer("LayerNormalization", lambda: mk.layers.LayerNormalization()),
    "Activation": _layer("Activation", lambda: mk.layers.Activation("relu")),
    "Conv2D": _layer("Conv2D", lambda: mk.layers.Conv2D(2, 1)),
    "MaxPooling2D": _layer("MaxPooling2D", lambda: mk.layers.MaxPooling2D(1)),
    "BatchNormalization": _layer("BatchNormalization", lambda: mk.layers.BatchNormalization()),
    "Dropout": lambda x: mk.layers.Dropout(0.5)(x, training=True),
    "Embedding": _layer("Embedding", lambda: mk.layers.Embedding(3, 2)),
    "Reshape": _layer("Reshape", lambda: mk.layers.Reshape((-1,))),
    "SimpleRNN": _layer("SimpleRNN", lambda: mk.layers.SimpleRNN(2)),
    "GlobalAveragePooling1D": _layer("GlobalAveragePooling1D", lambda: mk.layers.GlobalAveragePooling1D()),
}


def _loss(factory):
    def call(x):
        y = numpy.asarray(x) if x is not None and not isinstance(x, float) else x
        return factory()(y, x)

    return call


LOSS_TARGETS = {
    "MeanSquaredError": _loss(mk.losses.MeanSquaredError),
    "MeanAbsoluteError": _loss(mk.losses.MeanAbsoluteError),
    "CategoricalCrossentropy": _loss(mk.losses.CategoricalCrossentropy),
    "BinaryCrossentropy": _loss(mk.losses.BinaryCrossentropy),
    "Huber": _loss(mk.losses.Huber),
    "SparseCategoricalCrossentropy": lambda x: mk.losses.SparseCategoricalCrossentropy()(
        numpy.zeros(numpy.shape(x)[:-1], dtype="int64") if numpy.ndim(x) else 0, x),
    "Hinge": _loss(mk.losses.Hinge),
    "KLDivergence": _loss(mk.losses.KLDivergence),
    "Poisson": _loss(mk.losses.Poisson),
    "LogCosh": _loss(mk.losses.LogCosh),
    "CosineSimilarity": _loss(mk.losses.CosineSimilarity),
    "MeanSquaredLogarithmicError": _loss(mk.losses.MeanSquaredLogarithmicError),
    "MeanAbsolutePercentageError": _loss(mk.losses.MeanAbsolutePercentageError),
}


def _metric(factory):
    def call(x):
        metric = factory()
        metric.update_state(x, x)
        return metric.result()

    return call


METRIC_TARGETS = {
    "MeanSquaredError": _metric(mk.metrics.MeanSquaredError),
    "Accuracy": _metric(mk.metrics.Accuracy),
    "CategoricalAccuracy": _metric(mk.metrics.CategoricalAccuracy),
    "AUC": _metric(mk.metrics.AUC),
    "Mean": _metric(lambda: _MeanOfOne()),
    "TopKCategoricalAccuracy": _metric(lambda: mk.metrics.TopKCategoricalAccuracy(k=2)),
    "SparseCategoricalAccuracy": lambda x: _metric(mk.metrics.SparseCategoricalAccuracy)(x),
    "BinaryAccuracy": _metric(mk.metrics.BinaryAccuracy),
    "Precision": _metric(mk.metrics.Precision),
    "Recall": _metric(mk.metrics.Recall),
    "RootMeanSquaredError": _metric(mk.metrics.RootMeanSquaredError),
    "KLDivergence": _metric(mk.metrics.KLDivergence),
}


class _MeanOfOne:
    def __init__(self):
        self.metric = mk.metrics.Mean()

    def update_state(self, values, _):
        self.metric.update_state(values)

    def result(self):
        return self.metric.result()


def _optimizer(factory):
    def call(x):
        variable = mk.Tensor(numpy.ones(numpy.shape(x), dtype="float32"), requires_grad=True)
        optimizer = factory()
        optimizer.apply_gradients([(x, variable)])
        return variable

    return call


OPTIMIZER_TARGETS = {
    "SGD": _optimizer(lambda: mk.optimizers.SGD(0.1)),
    "Adam": _optimizer(lambda: mk.optimizers.Adam(0.1)),
    "RMSprop": _optimizer(lambda: mk.optimizers.RMSprop(0.1)),
    "Adagrad": _optimizer(lambda: mk.optimizers.Adagrad(0.1)),
    "Adadelta": _optimizer(lambda: mk.optimizers.Adadelta(0.1)),
    "Adamax": _optimizer(lambda: mk.optimizers.Adamax(0.1)),
    "AdamW": _optimizer(lambda: mk.optimizers.AdamW(0.1)),
    "Nadam": _optimizer(lambda: mk.optimizers.Nadam(0.1)),
}

TARGETS = {}
TARGETS.update({f"ops.{name}": (call, ref, name) for name, (call, ref) in OP_TARGETS.items()})
TARGETS.update({f"layers.{name}": (call, None, name) for name, call in LAYER_TARGETS.items()})
TARGETS.update({f"losses.{name}": (call, None, name) for name, call in LOSS_TARGETS.items()})
TARGETS.update({f"metrics.{name}": (call, None, name) for name, call in METRIC_TARGETS.items()})
TARGETS.update({f"optimizers.{name}": (call, None, name) for name, call in OPTIMIZER_TARGETS.items()})

_INVALID_KINDS = ("object", "str", "none")
NAN_AS_KERAS = {"losses.CategoricalCrossentropy", "losses.Poisson"}  # rows summing to 0, log of rates < 0


def _names_entry(message, entry, target):
    """The message starts by naming the entry (its op or class name, or
    the instance's snake_case name)."""
    snake = re.sub(r"(?<!^)(?=[A-Z])", "_", entry).lower()
    if target.startswith("layers.") and (f"({entry})" in message or re.search(r"layer '\w+'", message, re.IGNORECASE)):
        return True
    if target == "ops.tensor" and message.startswith("Cannot make a tensor"):
        return True
    return message.startswith(entry) or message.lower().startswith(snake)


def _host(value):
    if isinstance(value, mk.Tensor):
        return value.numpy()
    return numpy.asarray(value)


def _reference(ref, value):
    if ref is None:
        return None, None
    try:
        with warnings.catch_warnings(), numpy.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            return ref(numpy.asarray(value)), None
    except Exception as error:  # NumPy refuses: the library must too
        return None, error


def _close(got, expected, kind):
    expected = numpy.asarray(expected)
    if got.shape != expected.shape:
        return False
    if expected.size == 0:
        return True
    if expected.dtype.kind in "biu" and got.dtype.kind in "biu":
        return numpy.array_equal(got, expected)
    half = "float16" in (kind, str(got.dtype), str(expected.dtype))
    tolerance = 2e-2 if half else 1e-4
    if expected.dtype.kind == "c" or got.dtype.kind == "c":
        got, expected = got.astype("complex128"), expected.astype("complex128")
    else:
        got, expected = got.astype("float64"), expected.astype("float64")
    with numpy.errstate(all="ignore"):
        return numpy.allclose(got, expected, rtol=tolerance, atol=tolerance, equal_nan=True)


def classify(target, kind, value, with_site=False):
    """Run ``target`` on ``value`` (of ``kind``); return (outcome, detail), and
    with ``with_site`` the place a raw error came from (None otherwise)."""
    outcome, detail, error = _classify(target, kind, value)
    if with_site:
        return outcome, detail, raw_site(error) if outcome == "leak" else None
    return outcome, detail


def _classify(target, kind, value):
    call, ref, entry = TARGETS[target]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = call(value)
    except (ValueError, TypeError, IndexError) as error:
        # IndexError: an index out of range, the NumPy/Keras convention.
        if _names_entry(str(error), entry, target):
            return "clean", f"{type(error).__name__}: {error}", error
        return "leak", f"{type(error).__name__} not naming {entry}: {str(error)[:160]}", error
    except Exception as error:  # noqa: BLE001 - classifying is the point
        return "leak", f"{type(error).__name__}: {str(error)[:160]}", error
    if kind in _INVALID_KINDS:
        return "wrong", f"accepted {kind} input", None
    got = _host(result)
    if got.dtype.kind not in "biufc":
        return "wrong", f"returned a {got.dtype} array", None
    expected, ref_error = _reference(ref, value)
    if ref_error is not None:
        return "wrong", f"NumPy refuses ({type(ref_error).__name__}) but the library returned a value", None
    # NumPy's mean of nothing is NaN (so are Keras's metrics on an empty
    # batch), and Keras's categorical cross-entropy of a row summing to 0.
    input_has_nan = kind in ("nan", "empty") or numpy.size(value) == 0 or target in NAN_AS_KERAS
    if expected is not None:
        if not _close(got, expected, kind):
            return "wrong", f"differs from NumPy: {got.ravel()[:4]} vs {numpy.ravel(expected)[:4]}", None
        return "ok", "", None
    if not input_has_nan and got.dtype.kind in "fc" and numpy.isnan(got).any():
        host = numpy.asarray(value) if value is not None else None
        if host is None or host.dtype.kind not in "fc" or not numpy.isnan(host).any():
            return "wrong", "NaN from a non-NaN input", None
    return "ok", "", None


def raw_site(error):
    """Where an escaping error was raised, as ``path:line``: the innermost frame in
    minikeras (where a check was missing), else the innermost frame."""
    import os
    import traceback

    frames = traceback.extract_tb(error.__traceback__)
    package = os.path.dirname(os.path.abspath(mk.__file__))
    inside = [frame for frame in frames if os.path.abspath(frame.filename).startswith(package + os.sep)]
    frame = (inside or frames or [None])[-1]
    if frame is None:
        return f"{type(error).__name__} (no traceback)"
    return f"{os.path.relpath(frame.filename, os.path.dirname(package))}:{frame.lineno}"


def finite_number(value):
    return isinstance(value, float) and math.isfinite(value)
