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
  above excuses;
- ``pending`` / ``pending_refusal``: a ``wrong`` / ``refused`` call listed
  in ``fixtures/keras_reference_pending.json``, the known differences not
  fixed yet (a list that may only shrink); ``fixed``: a listed call that
  now answers as Keras (remove it from the list, unless it differs on
  another device).

``leak``, ``wrong`` and ``refused`` are failures. Where minikeras
answers differently on purpose (NumPy's answer against a TensorFlow quirk,
a documented choice), :data:`DIFFERS_ON_PURPOSE` says why. Usage:
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

# Ops whose answer is a Python number or a tuple of them (``ops.shape``): compared by value only.
PYTHON_NUMBERS = {"ndim", "shape", "size"}

# Label patterns -> why minikeras refuses what Keras takes (minikeras's own rules).
REFUSED_ON_PURPOSE = {
    r"[\w.]+\(\w+=list\)": "ops take tensors, arrays and numbers; a nested list is refused with a hint to wrap "
                             "it (tests/ops/test_arithmetic.py::test_lists_are_refused); models convert lists",
    r"[\w.]+\(\w+=(True|False)\)": "a bool is no number, size, axis or tensor operand of these ops",
    r"[\w.]+\(\w+=(nan|inf|1000000000000|-1000000000000|-7|-1|-0.5)\)":
        "numeric settings are finite and in their range (Keras's TensorFlow backend runs them, to garbage)",
    r"[\w.]+\(\w+=(real_)?complex64\)|[\w.]+\(\w+=\(1\+2j\)\)":
        "complex operands are refused by the ops of real numbers (ops/_entry.REAL_ONLY, the activations, "
        "normalisations and losses): a cast would drop the imaginary part",
}

# Label patterns -> why minikeras's answer differs from Keras's TensorFlow backend on purpose
# (NumPy's answer, or a documented choice); each was checked by hand.
DIFFERS_ON_PURPOSE = {
    r"(max_pool|adaptive_max_pool|segment_max|segment_min|argmax|argmin|argsort|sort|searchsorted|unique|angle)"
    r"\(\w+=(one_nan|all_nan)\)":
        "NaN: TensorFlow's max-pool, segment and arg kernels skip it (-FLT_MAX for an all-NaN window) and its sort "
        "puts it first; minikeras gives NumPy's answer (NaN propagates, sorts last)",
    r"heaviside\(x1=(one_nan|all_nan)\)": "heaviside(NaN) is NaN (NumPy); TensorFlow gives -1",
    r"floor_divide\(.*\)": "floor_divide is NumPy's exact floor (Python's //): 2 // 0.0434782617 is 45; TensorFlow "
                            "floors the rounded float32 quotient (46)",
    r"(isclose|nextafter|nancumsum|nancumprod)\(\w+=inf\)":
        "infinities as NumPy (isclose(1, inf) is False, nancumsum keeps inf); TensorFlow clamps or compares them "
        "as numbers",
    r"(linspace|logspace|geomspace)\((start|stop)=(one_nan|all_nan|inf)\)":
        "a NaN or inf endpoint makes its whole lane NaN (start + i * step); TensorFlow's formula leaves some "
        "entries finite",
    r"in_top_k\((predictions=inf|k=1000000000000)\)":
        "k at least the number of classes puts every target in the top k, and an inf score ranks first (NumPy's "
        "order); TensorFlow answers False for both",
    r"(tril\(k=-1000000000000\)|triu\(k=1000000000000\))":
        "a diagonal past the matrix zeroes it all (NumPy); Keras's TensorFlow code turns the huge k into 'keep all'",
    r"top_k\(sorted=False\)": "with sorted=False the order of the top k is the implementation's (the values match)",
    r"where\(condition=complex64\)": "a complex condition is true where it is nonzero (NumPy); TensorFlow reads its "
                                      "real part",
    r"vdot\(x1=complex64\)": "vdot conjugates its first operand (NumPy's definition); Keras's TensorFlow does not",
    r"(correlate\(x[12]=complex64\)|eigh\(x=complex64\)|view_as_complex\(x=float64\)|trapezoid\(dx=\(1\+2j\)\))":
        "complex dtypes as NumPy (a complex correlation stays complex, a Hermitian matrix has real eigenvalues, "
        "float64 pairs make complex128); Keras's TensorFlow backend drops or adds an imaginary part",
    r"argpartition\(.*\)": "Keras's TensorFlow argpartition is broken (its base call fails; other calls give indices "
                            "that are no permutation)",
    r"arange\(step=-1000000000000\)": "a step away from stop gives NumPy's empty range",
    r"vstack\(xs=empty_arrays\)": "vstack of two empty vectors is NumPy's (2, 0)",
    r"get_item\(x=list\)": "a list is made a tensor first (Keras's TensorFlow code indexes the Python list)",
    r"norm\(x=complex64\)": "the norm of complex entries is a real number (NumPy); Keras's TensorFlow returns it "
                             "as complex",
    r"lstsq\(rcond=.*\)": "the base matrix is rank-deficient: minikeras gives NumPy's (LAPACK gelsd) answer, which "
                          "does not move with rcond here; Keras's TensorFlow solve returns other solutions",
    r"matrix_rank\(tol=.*\)": "tol is NumPy's absolute threshold on the singular values",
    r"polar\(abs_=inf\)": "an infinite magnitude follows NumPy's complex arithmetic (inf * 0 is NaN)",
    r"softmax\(x=(one_nan|inf)\)": "a NaN or inf logit makes its row NaN (NumPy's arithmetic); TensorFlow zeroes the rest",
    r"roll\(shift=-?1000000000000\)": "TensorFlow takes the shift as an int32 (10**12 wraps); minikeras rolls by it",
    r"rot90\(k=2\)": "Keras's TensorFlow rot90 of a 3-D tensor by 180 degrees picks the wrong slices (NumPy's here)",
    r"kaiser\(beta=.*\)": "Keras's TensorFlow kaiser of a negative or huge beta (NumPy's window is even in beta)",
    r"gelu\((x=\w+)?\)": "ops.gelu's default here is the exact erf form (documented in ops/nn/activations.py)",
    r"sparsemax\(.*\)": "Keras's TensorFlow sparsemax computes tau wrongly (tests/ops/test_keras_ops_parity.KERAS_BUGS)",
    r"histogram\(x=(int32|inf|empty)\)|histogram\(range=\(0, 0\)\)":
        "TensorFlow's fixed-width histogram drops values on the last edge, of ints and infs; minikeras's is NumPy's",
    r"(batch_normalization|layer_normalization|rms_normalization|moments|soft_shrink)\(x=(int32|bool)\)":
        "integer input is normalised in float32; Keras's TensorFlow backend casts the result back to the int dtype",
}

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
    r"[\w.]+\(\w+=(int64\(1\)|array\(3\))\)":
        "Keras's TensorFlow code refuses a NumPy integer (or 0-d integer array) where it takes a Python int",
    r"geomspace\(axis=.*\)": "Keras's TensorFlow geomspace fails to broadcast its endpoints along axis > 0",
    r"image\.gaussian_blur\((kernel_size|sigma)=.*\)":
        "Keras's TensorFlow gaussian_blur indexes a scalar kernel_size or sigma as a pair",
    r"clip\(x_(min|max)=None\)": "minikeras takes None as no bound, as NumPy",
    r"vander\(increasing=[01]\)": "minikeras takes 0 and 1 as flags, as NumPy",
    r"(vstack|hstack|dstack)\(xs=(python_)?scalars\)": "Keras's TensorFlow stacks do not lift scalars as NumPy",
    r"searchsorted\(values=(scalar_array|python_float|python_int)\)":
        "Keras's TensorFlow searchsorted slices a scalar value (NumPy takes one)",
}

FAILURES = ("leak", "wrong", "refused")  # ("fixed" is reported: a call may differ on one device only)
PENDING = os.path.join(HERE, "fixtures", "keras_reference_pending.json")
_pending = []


def pending():
    """The labels of calls still known to differ from Keras (fixtures/keras_reference_pending.json):
    a list that may only shrink; the replay fails on a listed call that now answers as Keras."""
    if not _pending:
        with open(PENDING) as handle:
            _pending.append(set(json.load(handle)["labels"]))
    return _pending[0]


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
        if str(got.dtype) != expected["dtype"] and op not in PYTHON_NUMBERS:
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
        if label in pending():
            return "pending_refusal", f"{type(error).__name__}: {str(error)[:160]}", None
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
    if difference:
        why = _matches(DIFFERS_ON_PURPOSE, label)
        if why:
            return "ok", why, None
        if label in pending():
            return "pending", difference, None
        return "wrong", difference, None
    if label in pending():
        return "fixed", "listed in keras_reference_pending.json but now answers as Keras: remove it", None
    return "ok", "", None


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


def write_pending(results):
    labels = sorted(label for label, outcome, _, _ in results
                    if outcome in ("wrong", "refused", "pending", "pending_refusal"))
    with open(PENDING, "w") as handle:
        json.dump({"why": "Calls of the Keras-referenced fuzz whose answer still differs from Keras 3's (a result "
                          "that differs, or a refusal of input Keras takes) and that no documented rule in "
                          "keras_reference.py excuses. The list may only shrink: fix a call, then rerun "
                          "keras_reference.py --write-pending.", "labels": labels}, handle, indent=0)
        handle.write("\n")
    print(f"{len(labels)} calls listed in {os.path.basename(PENDING)}")


def main():
    import argparse

    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("ops", nargs="*")
    parser.add_argument("-v", "--verbose", action="store_true")
    parser.add_argument("--write-pending", action="store_true",
                        help="list every call that now differs (wrong or refused) in keras_reference_pending.json")
    args = parser.parse_args()
    results = run(set(args.ops) or None)
    if args.write_pending:
        write_pending(results)
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
          f"{counts['strict']} refused on purpose, {counts['pending']} differing answers and "
          f"{counts['pending_refusal']} refusals of valid input still pending (listed), {counts['fixed']} fixed but "
          f"still listed, "
          f"{counts['leak']} raw errors at {len(sites)} sites, {counts['wrong']} silent or wrong, "
          f"{counts['refused']} refused valid input, {counts['missing']} not recorded")
    return counts


if __name__ == "__main__":
    main()
