"""Replay of the Keras-referenced argument fuzz (issue 36): every call of
``keras_reference_cases.cases()`` on minikeras, judged against Keras 3's
recorded answer (``fixtures/keras_argument_answers.json``, written by
``make_keras_reference.py``; TensorFlow is not needed here).

Outcomes:

- ``ok``: the same answer (dtypes, shapes and values; only shapes and
  dtypes for the ops in :data:`SHAPE_ONLY`), or an answer where Keras has
  none (it timed out, or its TensorFlow backend does not implement the op);
- ``clean``: both refuse, minikeras with its own clear error (a
  ValueError, TypeError or IndexError naming the op, or the library's
  ResourceExhaustedError);
- ``strict``: minikeras refuses what Keras takes, where the argument's kind
  says the value is no valid one (``axis=True``, ``keepdims=2``: Keras's
  TensorFlow backend reads them by truth value or as ints) or where
  :data:`REFUSED_ON_PURPOSE` says why;
- ``leak``: a raw error (NumPy's, LinAlgError, AttributeError...);
- ``wrong``: a silent answer: a result where Keras refuses (unless
  :data:`KERAS_TF_LIMITS` says the refusal is only TensorFlow's), or one
  that differs from Keras's;
- ``refused``: minikeras refuses, cleanly, input Keras takes and nothing
  above excuses.

``leak``, ``wrong`` and ``refused`` are failures. Usage:
``python tests/fuzz/keras_reference.py [-v] [OP ...]``.
"""
import collections
import json
import os
import re
import sys
import warnings

import numpy

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(os.path.dirname(HERE)))  # the repository, for minikeras

import keras_reference_cases  # noqa: E402

# Outputs defined only up to a choice Keras and minikeras make differently
# (eigenvector signs, uninitialised memory, random draws): shapes and dtypes only.
SHAPE_ONLY = {"empty", "empty_like", "eig", "eigh", "svd", "qr", "image.elastic_transform"}

# (op, argument-variant pattern) -> why minikeras refuses what Keras takes.
REFUSED_ON_PURPOSE = {}

# Keras's refusals that are accidents of its TensorFlow backend, not a rule of
# Keras's (its JAX backend and NumPy answer): minikeras may answer there, or
# refuse cleanly. Patterns of ``"ErrorType: message"``, each with why.
KERAS_TF_LIMITS = {
    r".*Value for attr '\w+' of \w+ is not in the list of allowed values.*|.*No OpKernel was registered.*":
        "TensorFlow has no kernel of the op for that dtype (complex, bool, int, float16)",
    r".*cannot compute \w+ as input #\d+\(zero-based\) was expected to be a \w+ tensor but is a \w+ tensor.*":
        "Keras's TensorFlow backend did not promote mixed dtypes before a kernel",
    r"TypeError: Cannot convert .* to EagerTensor of dtype \w+":
        "Keras's TensorFlow backend converted a constant to the input's dtype (0.5 to int32)",
    r".*Could not find device for node.*": "TensorFlow has no CPU kernel of the op for that dtype",
    r"AttributeError: '(list|tuple)' object has no attribute '(shape|dtype|as_list|ndim)'":
        "Keras's TensorFlow code read .shape of a Python list it had not converted",
    r"TypeError: Expected numeric or variant tensor, got dtype tf.bool.*": "TensorFlow refuses bool there",
    r"ValueError: attn_logits_soft_cap is only supported for JAX.*": "a JAX-only option of Keras",
    r"NotImplementedError: .*": "not implemented by Keras's TensorFlow backend",
    r"AttributeError: '(float|int|NoneType|str|numpy\.\w+)' object has no attribute '\w+'":
        "Keras's TensorFlow code read an attribute of a Python value it had not converted",
    r"TypeError: (bad operand type for unary -: 'list'|can only concatenate list .*)":
        "Keras's TensorFlow code applied arithmetic to an unconverted list",
    r"UnboundLocalError: .*": "a bug in Keras's TensorFlow code",
    r".*Requires start <= limit when delta > 0.*|.*Requires start >= limit when delta < 0.*":
        "TensorFlow's range refuses an empty range (NumPy and JAX give an empty one)",
    r"TypeError: Expected bool for argument '\w+' not .*":
        "TensorFlow wants a Python bool; minikeras takes 0 and 1 as flags too, as NumPy",
    r"InvalidArgumentError: .*(__wrapped__BroadcastTo|__wrapped__Fill|__wrapped__ScatterNd).*":
        "TensorFlow wants the shape as a vector and sizes >= 0 (NumPy takes an int, a negative k of eye...)",
    r"InvalidArgumentError: .*Value for attr 'num_split' of 0 must be at least minimum 1.*":
        "TensorFlow cannot split into one piece by an empty list of split points (NumPy can)",
    r"InvalidArgumentError: .*__wrapped__MatrixDiagPartV3.*":
        "TensorFlow refuses a diagonal offset past the matrix (NumPy gives an empty diagonal)",
    r"InvalidArgumentError: .*Input (matrix )?is not invertible.*":
        "TensorFlow's inverse and solve refuse NaN matrices, which NumPy and JAX give NaN for",
    r"InvalidArgumentError: .*__wrapped__UnsortedSegment\w+.*":
        "TensorFlow refuses segment ids past num_segments (Keras's JAX backend drops them, as minikeras)",
    r"InvalidArgumentError: .*__wrapped__MatrixBandPart.*":
        "TensorFlow limits tril/triu's k to the matrix (NumPy takes any k)",
    r"InvalidArgumentError: .*__wrapped__InvertPermutation.*": "Keras's TensorFlow lu_factor is not batched",
    r"InvalidArgumentError: .*__wrapped__Roll.*shift and axis.*":
        "TensorFlow wants one shift per axis (NumPy broadcasts a single shift)",
    r"TypeError: '[<>]=?' not supported between instances of '(list|int)' and '(list|int|float)'":
        "Keras's TensorFlow code compared an unconverted list",
    r"ValueError: Invalid dtype: list": "Keras's TensorFlow linspace of an unconverted list",
    r"ValueError: data type .* not inexact|TypeError: Input `a` must have `float`-like `dtype`.*":
        "TensorFlow's linear algebra refuses integer matrices (NumPy computes them in float)",
    r"TypeError: input must be a numeric tensor, but got tensor with dtype <dtype: 'bool'>":
        "TensorFlow's real/imag refuse bools",
    r"TypeError: argument of type 'int' is not iterable": "Keras's TensorFlow code iterates an int shape",
    r"ValueError: `features.dtype` must be a floating point tensor.*":
        "TensorFlow's gelu refuses ints (Keras's other backends compute them in float)",
    r"InvalidArgumentError: .*In\[0\] (ndims|mismatch).*": "Keras's TensorFlow corrcoef of a 1-D input",
}

# Calls where Keras's refusal is about the *kind* of a valid value, not the value:
# a NumPy integer where its code wants a Python int (NumPy's own functions take both).
KERAS_TYPE_STRICTNESS = {
    r"[\w.]+\(\w+=int64\(1\)\)": "Keras's TensorFlow code refuses a NumPy integer where it takes a Python int",
    r"geomspace\(axis=.*\)": "Keras's TensorFlow geomspace fails to broadcast its endpoints along axis > 0",
    r"image\.gaussian_blur\((kernel_size|sigma)=.*\)":
        "Keras's TensorFlow gaussian_blur indexes a scalar kernel_size or sigma as a pair",
    r"clip\(x_(min|max)=None\)": "minikeras takes None as no bound, as NumPy",
    r"vander\(increasing=[01]\)": "minikeras takes 0 and 1 as flags, as NumPy",
    r"(vstack|hstack|dstack)\(xs=(python_)?scalars\)": "Keras's TensorFlow stacks do not lift scalars as NumPy",
    r"searchsorted\(values=(scalar_array|python_float|python_int)\)":
        "Keras's TensorFlow searchsorted slices a scalar value (NumPy takes one)",
}

FAILURES = ("leak", "wrong", "refused")


def load_answers():
    with open(keras_reference_cases.FIXTURE) as handle:
        return json.load(handle)["answers"]


def _matches(table, label):
    return next((why for pattern, why in table.items() if re.fullmatch(pattern, label)), None)


def _host(value):
    import minikeras as mk

    return value.numpy() if isinstance(value, mk.Tensor) else value


def _outputs(result):
    """The output arrays; a Python number (``ops.size``) as Keras's tensor of it (int32, float32)."""
    from make_keras_reference import flatten

    def host(value):
        if type(value) is int:
            return numpy.int32(value) if -2**31 <= value < 2**31 else numpy.int64(value)
        if type(value) is float:
            return numpy.float32(value)
        return _host(value)

    return flatten(result, host)


def _close(got, expected, dtype):
    tolerance = 2e-2 if "16" in dtype else (1e-4 if "32" in dtype or "complex64" in dtype else 1e-6)
    got, expected = numpy.asarray(got, "complex128"), numpy.asarray(expected, "complex128")
    return numpy.allclose(got, expected, rtol=tolerance, atol=tolerance, equal_nan=True)


def _decode(values):
    """Recorded values (``"nan"``, ``"inf"`` as strings, complex as ``[re, im]``) as an array."""
    items = [complex(float(item[0]), float(item[1])) if isinstance(item, list) else
             (float(item) if isinstance(item, str) else item) for item in values]
    return numpy.array(items)


def compare(op, outputs, recorded):
    """None when minikeras's ``outputs`` are Keras's ``recorded`` ones, else what differs."""
    if len(outputs) != len(recorded):
        return f"{len(outputs)} outputs, Keras gives {len(recorded)}"
    for index, (got, expected) in enumerate(zip(outputs, recorded)):
        got = numpy.asarray(got)
        if list(got.shape) != expected["shape"]:
            return f"output {index}: shape {got.shape}, Keras {tuple(expected['shape'])}"
        if str(got.dtype) != expected["dtype"]:
            return f"output {index}: dtype {got.dtype}, Keras {expected['dtype']}"
        if op in SHAPE_ONLY or got.dtype.kind not in "biufc":
            continue
        if "values" in expected:
            if not _close(got.ravel(), _decode(expected["values"]), expected["dtype"]):
                return f"output {index}: {got.ravel()[:6]} vs Keras {expected['values'][:6]}"
        else:
            from make_keras_reference import summarize

            ours, theirs = summarize(got), expected["summary"]
            scale = max(1.0, float(theirs["abs"]) if theirs["abs"] not in ("inf", "nan") else 1.0)
            if ours["nan"] != theirs["nan"] or not _close(_decode([ours["sum"]]), _decode([theirs["sum"]]),
                                                          expected["dtype"]) and \
                    abs(_decode([ours["abs"]])[0] - _decode([theirs["abs"]])[0]) > 1e-3 * scale:
                return f"output {index}: summary {ours} vs Keras {theirs}"
            if not _close(_decode(ours["first"]), _decode(theirs["first"]), expected["dtype"]):
                return f"output {index}: {ours['first']} vs Keras {theirs['first']}"
    return None


def _clean(function, op, error):
    """The library's own error naming the op (or the op it is an alias of: ``absolute`` is ``abs``)."""
    import minikeras as mk

    if isinstance(error, (mk.errors.ResourceExhaustedError, mk.errors.DeviceError)):
        return True
    names = {op.split(".")[-1], function.__name__}
    return type(error) in (ValueError, TypeError, IndexError) and any(
        str(error).startswith(name) or str(error).startswith(f"ops.{name}") for name in names)


def _refusal_is_strictness(op, argument, value, parameters):
    """True when ``value`` is no valid value of ``argument``'s kind (argument_cases's oracle:
    ``axis=True``, ``keepdims=2``), whatever Keras makes of it."""
    import inspect

    import argument_cases

    default = next((default for name, _, default in parameters if name == argument), None)
    default = keras_reference_cases._default_value(default) if default else inspect.Parameter.empty
    parameter = inspect.Parameter(argument, inspect.Parameter.POSITIONAL_OR_KEYWORD, default=default)
    kind = argument_cases.argument_kind(parameter, op.split(".")[-1])
    return kind is not None and argument_cases.must_refuse(kind, value, default, 4)


def _numeric_answer(recorded):
    """Keras answered with numbers (not a string tensor: ``zeros_like("a")`` is TensorFlow's ``b""``)."""
    return "out" in recorded and all(output["dtype"] in _NUMERIC_DTYPES for output in recorded["out"])


_NUMERIC_DTYPES = {"bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16",
                   "bfloat16", "float32", "float64", "complex64", "complex128"}


def _base_call_fails(op, base_answer):
    """Why every refusal of ``op`` is no rule of Keras's: its working call fails too (argpartition)."""
    if base_answer is not None and "raises" in base_answer:
        return f"Keras's TensorFlow {op} fails even on its base call ({base_answer['raises']})"
    return None


def classify(case, recorded, parameters, answers_of_base=None):
    """``(outcome, detail, site)`` of one replayed ``case`` (as ``keras_reference_cases.cases()`` yields)."""
    import minikeras as mk
    from fuzz_cases import raw_site

    label, op, args, kwargs, argument, value = case
    function = keras_reference_cases.resolve(mk.ops, op)
    try:
        with warnings.catch_warnings(), numpy.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            outputs = _outputs(function(*args, **kwargs))
    except Exception as error:  # noqa: BLE001 - classifying is the point
        if not _clean(function, op, error):
            return "leak", f"{type(error).__name__}: {str(error)[:160]}", raw_site(error)
        if not _numeric_answer(recorded):
            return "clean", "", None
        why = _matches(REFUSED_ON_PURPOSE, label)
        if why or (argument is not None and _refusal_is_strictness(op, argument, value, parameters)):
            return "strict", why or "", None
        return "refused", f"{type(error).__name__}: {str(error)[:160]}", None
    if "timeout" in recorded or recorded.get("raises") in ("NotImplementedError", "WorkerDied"):
        return "ok", "no Keras answer", None
    if "raises" in recorded:
        why = _matches(KERAS_TF_LIMITS, f"{recorded['raises']}: {recorded['message']}") or \
            _matches(KERAS_TYPE_STRICTNESS, label) or _base_call_fails(op, answers_of_base)
        if why:
            return "ok", why, None
        return "wrong", f"Keras raises {recorded['raises']}: {recorded['message'][:100]}", None
    difference = compare(op, outputs, recorded["out"])
    return ("wrong", difference, None) if difference else ("ok", "", None)


def run(ops=None, answers=None):
    """``[(label, outcome, detail, site)]`` of the replay (of ``ops`` only, if given)."""
    answers = load_answers() if answers is None else answers
    signatures = keras_reference_cases.signatures()
    results = []
    for case in keras_reference_cases.cases():
        label, op = case[:2]
        if ops and op not in ops:
            continue
        recorded = answers.get(label)
        if recorded is None:
            results.append((label, "missing", "no recorded Keras answer (rerun make_keras_reference.py)", None))
            continue
        results.append((label, *classify(case, recorded, signatures[op], answers.get(f"{op}()"))))
    return results


def main():
    import argparse

    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("ops", nargs="*")
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args()
    results = run(set(args.ops) or None)
    counts = collections.Counter(outcome for _, outcome, _, _ in results)
    sites = collections.defaultdict(list)
    for label, outcome, detail, site in results:
        if outcome == "leak":
            sites[site].append(f"{label}: {detail}")
        elif outcome in ("wrong", "refused", "missing") and args.verbose:
            print(f"{outcome:8s} {label}: {detail}")
    for site, labels in sorted(sites.items(), key=lambda item: -len(item[1])):
        if args.verbose:
            print(f"leak     {site} ({len(labels)}): {labels[0]}")
    print(f"{len(results)} calls: {counts['ok']} answers as Keras's, {counts['clean']} clean refusals as Keras, "
          f"{counts['strict']} refused on purpose, "
          f"{counts['leak']} raw errors at {len(sites)} sites, {counts['wrong']} silent or wrong, "
          f"{counts['refused']} refused valid input, {counts['missing']} not recorded")
    return counts


if __name__ == "__main__":
    main()
