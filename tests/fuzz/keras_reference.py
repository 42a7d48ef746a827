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

from keras_reference_rules import (DIFFERS_ON_PURPOSE, KERAS_TF_LIMITS, KERAS_TYPE_STRICTNESS,  # noqa: E402
                                   PYTHON_NUMBERS, REFUSED_ON_PURPOSE, SHAPE_ONLY)

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


def write_pending(results, ops=None):
    """List the calls of ``results`` that differ in the pending file (a run of some ``ops`` only keeps
    the other ops' listed calls)."""
    labels = {label for label, outcome, _, _ in results if outcome in ("wrong", "refused", "pending", "pending_refusal")}
    if ops:
        labels |= {label for label in pending() if label.split("(")[0] not in ops}
    labels = sorted(labels)
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
        write_pending(results, set(args.ops))
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
