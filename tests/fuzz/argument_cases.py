"""Argument fuzzing: every public op's non-array arguments (issue 27).

The ops are discovered, not listed: every public function of ``minikeras.ops``
(so an op added later is fuzzed without an entry here). Each is first called
once with a working *base call* (its required operands as small float32
arrays, or the arguments in :data:`BASE_CALLS` where it needs others); then
each non-array argument in turn receives every value of :data:`FUZZ_VALUES`
(bools, negatives, floats for ints, strings, None, huge ints, NaN...), the
others keeping their base values.

The oracle knows what each *kind* of argument accepts (:func:`must_refuse`):
an axis is an int in range (never a bool or a float), a flag a bool, a count
an int, a dtype a dtype name, an option one of its strings, a shape a tuple
of non-negative ints. An argument's kind comes from its name
(:data:`NAME_KINDS`), else from its default's type; one of unknown kind is
fuzzed for raw errors only. Outcomes, as in fuzz_cases.py:

- ``ok``: a result for a value the kind does not require refusing;
- ``clean``: the library's own ValueError/TypeError/IndexError naming the op;
- ``leak``: anything else raised (a raw NumPy/Python error, MemoryError);
- ``wrong``: a result for a value that must be refused (``sum(x, True)``).
"""
import inspect
import json
import os
import types
import warnings

import numpy

import minikeras as mk
from fuzz_cases import raw_site
from keras_base_calls import KERAS_BASE_CALLS

HUGE = 10**12

FUZZ_VALUES = (True, False, 0, 1, -1, 2, -7, 1.5, -0.5, float("nan"), HUGE, -HUGE, "a", "", None, [], (1.5,),
               (0, 0), numpy.int64(1), numpy.float32(2.0), "float32", "valid")

# name -> kind; anything not listed takes its kind from its default's type.
NAME_KINDS = {
    "axis": "axis", "axes": "axis", "axis1": "axis", "axis2": "axis", "source": "axis", "destination": "axis",
    "keepdims": "flag", "sparse": "flag", "relu": "flag", "approximate": "flag", "requires_grad": "flag",
    "go_backwards": "flag", "return_sequences": "flag", "reset_after": "flag",
    "dtype": "dtype",
    "num_classes": "count", "depth": "count", "groups": "count", "n": "count", "m": "count", "repeats": "count",
    "shape": "shape", "noise_shape": "shape",
    "pool_size": "window", "strides": "window", "dilation_rate": "window", "size": "window",
    "padding": "option", "interpolation": "option", "fill_mode": "option", "mode": "option",
    "activation": "activation", "recurrent_activation": "activation", "data_format": "data_format",
    "rate": "number", "epsilon": "number", "alpha": "number", "negative_slope": "number", "l1": "number",
    "l2": "number", "fill_value": "number", "constant_values": "number", "x_min": "number", "x_max": "number",
    "start": "number", "stop": "number", "step": "number",
}
# (op, argument) -> kind, where the name alone would mislead.
OP_KINDS = {("reshape", "shape"): "new_shape", ("tile", "repeats"): "shape", ("clip", "x_min"): "bound",
            ("clip", "x_max"): "bound", ("squareplus", "b"): "number",
            ("scan", "unroll"): None,  # Keras's unroll: a positive int or a bool
            ("stft", "window"): None, ("istft", "window"): None,  # a window name, a tensor, or None
            ("unfold", "padding"): "shape", ("fold", "padding"): "shape",  # PyTorch's: ints >= 0
            ("select", "default"): "number", ("logspace", "base"): "number",
            ("ctc_decode", "mask_index"): "optional_count", ("normalize", "order"): "number",
            ("full_like", "fill_value"): None}  # a number, or an array broadcast to x's shape (Keras)
OP_KINDS.update({(op, end): "endpoint" for op in ("linspace", "logspace", "geomspace") for end in ("start", "stop")})  # None: the last class is the blank
# Ops whose operand (the tensor an axis refers to) is not their first argument.
OPERAND_POSITION = {"associative_scan": 1, "sparse_categorical_crossentropy": 1}
# Ops whose axis may name a new axis (one past the operand's).
NEW_AXIS = {"expand_dims": 1, "stack": 1, "one_hot": 1, "multi_hot": 1}  # (multi_hot: Keras's one_hot axis)
# Arguments where a huge value asks for a legitimately endless run (10**12 loop
# steps): those values are not fuzzed.
LONG_RUNNING = {("fori_loop", "lower"), ("fori_loop", "upper"), ("while_loop", "loop_vars"), ("scan", "length")}
# Arguments that are arrays, a device or a generator: fuzzed elsewhere, or not by value.
SKIPPED = {"device", "generator", "cross_replica", "index", "indices", "tensors", "transform", "output_padding",
           "pad_width", "indices_or_sections", "initial_state", "initial_h", "initial_c", "bias", "gamma", "beta",
           "mean", "variance", "kernel", "recurrent_kernel", "table", "labels", "condition", "x1", "x2"}


def _array(*shape):
    return numpy.linspace(-1.0, 1.0, int(numpy.prod(shape))).astype("float32").reshape(shape)


def _ones(*shape):
    return numpy.ones(shape, "float32")


# Base calls for ops whose required arguments are not all (2, 3, 4) float32 arrays.
BASE_CALLS = {
    "arange": ((5,), {}),
    "eye": ((3,), {}),
    "full": (((2, 3), 1.5), {}),
    "zeros": (((2, 3),), {}),
    "ones": (((2, 3),), {}),
    "cast": ((_array(2, 3), "float64"), {}),
    "clip": ((_array(2, 3), -0.5, 0.5), {}),
    "reshape": ((_array(2, 3), (3, 2)), {}),
    "expand_dims": ((_array(2, 3), 0), {}),
    "moveaxis": ((_array(2, 3, 4), 0, 1), {}),
    "swapaxes": ((_array(2, 3, 4), 0, 1), {}),
    "one_hot": ((numpy.array([0, 2, 1]), 3), {}),
    "repeat": ((_array(2, 3), 2), {}),
    "tile": ((_array(2, 3), 2), {}),
    "split": ((_array(4, 3), 2), {}),
    "take": ((_array(4, 3), numpy.array([0, 1])), {}),
    "getitem": ((_array(4, 3), 1), {}),
    "pad": ((_array(2, 3), 1), {}),
    "dropout": ((_array(2, 3), 0.5), {}),
    "where": ((_array(2, 3) > 0, _array(2, 3), _ones(2, 3)), {}),
    "concatenate": (([_array(2, 3), _array(2, 3)],), {}),
    "hstack": (([_array(2, 3), _array(2, 3)],), {}),
    "vstack": (([_array(2, 3), _array(2, 3)],), {}),
    "dstack": (([_array(2, 3), _array(2, 3)],), {}),
    "norm": ((_array(3, 3),), {}),
    "stack": (([_array(2, 3), _array(2, 3)],), {}),
    "embedding": ((numpy.array([0, 2]), _ones(3, 2)), {}),
    "sparse_softmax_cross_entropy": ((_array(2, 3), numpy.array([0, 2])), {}),
    "conv1d": ((_array(1, 5, 2), _ones(2, 2, 3)), {}),
    "conv2d": ((_array(1, 5, 5, 2), _ones(2, 2, 2, 3)), {}),
    "conv3d": ((_array(1, 4, 4, 4, 2), _ones(2, 2, 2, 2, 3)), {}),
    "conv2d_transpose": ((_array(1, 4, 4, 2), _ones(2, 2, 3, 2)), {}),
    "conv3d_transpose": ((_array(1, 2, 3, 2, 2), _ones(2, 2, 2, 3, 2)), {}),
    "depthwise_conv2d": ((_array(1, 5, 5, 2), _ones(2, 2, 2, 1)), {}),
    "max_pool1d": ((_array(1, 6, 2),), {}),
    "avg_pool1d": ((_array(1, 6, 2),), {}),
    "max_pool2d": ((_array(1, 6, 6, 2), 2), {}),
    "avg_pool2d": ((_array(1, 6, 6, 2), 2), {}),
    "max_pool3d": ((_array(1, 4, 4, 4, 2),), {}),
    "avg_pool3d": ((_array(1, 4, 4, 4, 2),), {}),
    "resize": ((_array(1, 4, 4, 2), (6, 6)), {}),
    "upsample": ((_array(1, 4, 4, 2), (2, 2)), {}),
    "affine_transform": ((_array(1, 4, 4, 2), numpy.array([[1, 0, 0, 0, 1, 0, 0, 0]], "float32")), {}),
    "dense": ((_array(2, 3), _ones(3, 4)), {}),
    "bias_activation": ((_array(2, 3), _ones(3)), {}),
    "matmul": ((_array(2, 3), _ones(3, 4)), {}),
    "layer_norm": ((_array(2, 3), _ones(3), _ones(3), -1, 1e-3), {}),
    "batch_norm_inference": ((_array(2, 3), _ones(3), _ones(3), _ones(3), _ones(3), -1, 1e-3), {}),
    "batch_norm_training": ((_array(2, 3), _ones(3), _ones(3), -1, 1e-3), {}),
    "group_normalize": ((_array(2, 4), 2), {}),
    "simple_rnn_sequence": ((_array(2, 3, 4), _ones(4, 5), _ones(5, 5), _ones(5), _ones(2, 5)), {}),
    "lstm_sequence": ((_array(2, 3, 4), _ones(4, 20), _ones(5, 20), _ones(20), _ones(2, 5), _ones(2, 5)), {}),
    "gru_sequence": ((_array(2, 3, 4), _ones(4, 15), _ones(5, 15), _ones(2, 15), _ones(2, 5)), {}),
    "weight_penalty": ((_array(2, 3),), {"l1": 0.1}),
}
BASE_CALLS.update(KERAS_BASE_CALLS)
# Ops whose every argument is an array (fuzzed by fuzz_cases.py) have nothing to fuzz here.


def not_yet_fuzzed():
    """Public ops whose arguments this fuzz does not cover yet (a list that
    may only shrink: see not_yet_argument_fuzzed.json)."""
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "not_yet_argument_fuzzed.json")) as handle:
        return set(json.load(handle)["ops"])


def public_ops(include_not_yet_fuzzed=False):
    """``{name: function}`` of every public op in ``minikeras.ops`` (discovered),
    less those listed in not_yet_argument_fuzzed.json unless asked for."""
    skipped = set() if include_not_yet_fuzzed else not_yet_fuzzed()
    found = {}
    for name in dir(mk.ops):
        value = getattr(mk.ops, name)
        if not name.startswith("_") and isinstance(value, types.FunctionType) and name not in skipped:
            found[name] = value
    return found


def base_call(name, function):
    """``(args, kwargs)`` of a call of ``function`` that works."""
    if name in BASE_CALLS:
        args, kwargs = BASE_CALLS[name]
        return list(args), dict(kwargs)
    required = [p for p in inspect.signature(function).parameters.values()
                if p.default is inspect.Parameter.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return [_array(2, 3, 4) for _ in required], {}


def argument_kind(parameter, op_name=None):
    """The kind of an argument (see NAME_KINDS), or None to fuzz for raw errors only."""
    if (op_name, parameter.name) in OP_KINDS:  # None: fuzzed for raw errors only
        return OP_KINDS[op_name, parameter.name]
    if parameter.name in NAME_KINDS:
        return NAME_KINDS[parameter.name]
    default = parameter.default
    if isinstance(default, bool):
        return "flag"
    if isinstance(default, int):
        return "count"
    if isinstance(default, float):
        return "number"
    if isinstance(default, str):
        return "option"
    return None


def _is_int(value):
    return isinstance(value, (int, numpy.integer)) and not isinstance(value, (bool, numpy.bool_))


def _is_real(value):
    return isinstance(value, (int, float, numpy.integer, numpy.floating)) and not isinstance(value, (bool, numpy.bool_))


def must_refuse(kind, value, default, ndim):
    """Whether an argument of ``kind`` must refuse ``value`` (its default is
    ``default``; the op's axes are ``range(-ndim, ndim)``). False also where
    either outcome is right (None as an axis, 0/1 as a flag)."""
    if kind == "data_format":  # None is Keras's configured default
        return value is not None and value not in ("channels_last", "channels_first")
    if value is None:
        return kind in ("flag", "count", "number", "option", "shape", "window") and default is not None
    if kind == "axis":
        if isinstance(value, (tuple, list)):
            return not all(_is_int(item) for item in value) or any(not -ndim <= item < ndim for item in value)
        return not _is_int(value) or not -ndim <= value < ndim
    if kind == "flag":
        return not isinstance(value, (bool, numpy.bool_)) and not (_is_int(value) and value in (0, 1))
    if kind == "count":
        return not _is_int(value)
    if kind == "optional_count":
        return value is not None and not _is_int(value)
    if kind == "number":
        return not _is_real(value) and not isinstance(value, (bool, numpy.bool_))
    if kind == "dtype":
        if not isinstance(value, str):
            return True
        try:
            with warnings.catch_warnings():  # NumPy 2 deprecates some aliases ('a')
                warnings.simplefilter("ignore")
                return numpy.dtype(value).kind not in "biufc"
        except TypeError:
            return True
    if kind == "option":
        return not isinstance(value, str) or value in ("a", "", "float32")
    if kind == "activation":  # a name, a function, or None (linear), as Keras's activations.get
        return not (isinstance(value, str) or callable(value)) or value in ("a", "", "float32", "valid")
    if kind == "shape":
        items = value if isinstance(value, (tuple, list)) else (value,)
        return not all(_is_int(item) and item >= 0 for item in items)
    if kind == "new_shape":  # reshape: one -1 may stand for the rest
        items = value if isinstance(value, (tuple, list)) else (value,)
        return not all(_is_int(item) and item >= -1 for item in items) or list(items).count(-1) > 1
    if kind == "endpoint":  # a number, or a vector of them (a grid of ranges)
        items = value if isinstance(value, (tuple, list)) else (value,)
        return not all(_is_real(item) or isinstance(item, (bool, numpy.bool_)) for item in items)
    if kind == "bound":  # clip: a number, or None for no bound
        return not _is_real(value) and not isinstance(value, (bool, numpy.bool_))
    if kind == "window":
        items = value if isinstance(value, (tuple, list)) else (value,)
        return not items or not all(_is_int(item) and item >= 1 for item in items)
    return False


def _names_op(message, name):
    return message.startswith(name) or message.startswith(f"ops.{name}")


def classify_call(name, function, args, kwargs, refuse):
    """Run one fuzzed call; return ``(outcome, detail, site)``."""
    try:
        with warnings.catch_warnings(), numpy.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            result = function(*args, **kwargs)
            if isinstance(result, mk.Tensor):
                result.numpy()
    except Exception as error:  # noqa: BLE001 - an error of the user's own function passes through unchanged
        if _raised_in_users_function(error):
            return "clean", f"the user's function raised {type(error).__name__}: {error}", None
        return _classify_error(name, error)
    if refuse:
        return "wrong", "accepted", None
    return "ok", "", None


def _raised_in_users_function(error):
    """True when ``error`` comes from a function the base call passed (keras_base_calls.py's
    lambdas: ``fori_loop(0, 3, body, init_val="a")`` fails in ``body``, as it should)."""
    tb = error.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    return tb is not None and os.path.basename(tb.tb_frame.f_code.co_filename) == "keras_base_calls.py"


def _classify_error(name, error):
    if isinstance(error, (ValueError, TypeError, IndexError)):
        if _names_op(str(error), name):
            return "clean", f"{type(error).__name__}: {error}", None
        return "leak", f"{type(error).__name__} not naming {name}: {str(error)[:160]}", raw_site(error)
    if isinstance(error, (mk.errors.ResourceExhaustedError, mk.errors.DeviceError)):
        # The library's own: they name the device and the op's Function (ConvTranspose).
        return "clean", f"{type(error).__name__}: {error}", None
    return "leak", f"{type(error).__name__}: {str(error)[:160]}", raw_site(error)


def cases(ops=None):
    """Every fuzzed call: ``(op name, function, args, kwargs, argument, value, must refuse)``.

    ``ops`` is ``{name: function}`` (default: :func:`public_ops`, the ops the
    test covers; ``fuzz_pending_ops.py`` passes the ones not yet covered)."""
    for name, function in sorted((public_ops() if ops is None else ops).items()):
        args, kwargs = base_call(name, function)
        parameters = list(inspect.signature(function).parameters.values())
        first = args[OPERAND_POSITION.get(name, 0)] if args else None
        if isinstance(first, list):  # concatenate, stack: the axes of each operand
            first = first[0]
        ndim = (numpy.ndim(first) if first is not None else 0) + NEW_AXIS.get(name, 0)
        for index, parameter in enumerate(parameters):
            if parameter.name in SKIPPED or parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
                continue
            if index == 0 and name not in BASE_CALLS:
                continue  # the operand: fuzz_cases.py fuzzes it
            if index == 0 and parameter.name in ("x", "images", "logits", "inputs", "tensor", "data"):
                continue
            kind = argument_kind(parameter, name)
            for value in FUZZ_VALUES:
                if (name, parameter.name) in LONG_RUNNING and value in (HUGE, -HUGE):
                    continue
                call_args, call_kwargs = list(args), dict(kwargs)
                if index < len(call_args):
                    call_args[index] = value
                else:
                    call_kwargs[parameter.name] = value
                refuse = kind is not None and must_refuse(kind, value, parameter.default, ndim)
                yield name, function, call_args, call_kwargs, parameter.name, value, refuse


def base_failures(ops=None):
    """``{op: error}`` for ops whose base call fails (they are then fuzzed anyway, but say so)."""
    failures = {}
    for name, function in sorted((public_ops() if ops is None else ops).items()):
        args, kwargs = base_call(name, function)
        try:
            function(*args, **kwargs)
        except Exception as error:  # noqa: BLE001
            failures[name] = f"{type(error).__name__}: {error}"
    return failures

