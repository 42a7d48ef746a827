"""The Keras-referenced argument fuzz (issue 36): some 20,000 calls of every
``keras.ops`` and ``keras.ops.image`` function (each argument in turn given
other dtypes, empty and NaN arrays, scalars, lists, strings, None, huge and
negative numbers...) replayed on minikeras against Keras 3.15's recorded
answers (``fixtures/keras_argument_answers.json``; TensorFlow is not needed).

Where Keras answers, minikeras gives the same dtypes, shapes and values;
where Keras refuses, minikeras refuses with its own clear error; never a raw
NumPy/LinAlgError. See keras_reference.py for the outcomes and the
documented exceptions, make_keras_reference.py to record the answers again.
"""
import collections
import json
import os
import sys

import numpy

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import keras_reference  # noqa: E402
import keras_reference_cases  # noqa: E402


def test_every_keras_referenced_call_answers_as_keras():
    results = keras_reference.run()
    counts = collections.Counter(outcome for _, outcome, _, _ in results)
    bad = [f"{outcome} {label} at {site}: {detail}" for label, outcome, detail, site in results
           if outcome in keras_reference.FAILURES + ("missing",)]
    assert not bad, f"{len(bad)} calls differ from Keras:\n" + "\n".join(bad[:40])
    assert len(results) > 18000 and counts["ok"] > 7000 and counts["clean"] > 10000, counts
    assert counts["leak"] == 0 and counts["pending"] + counts["pending_refusal"] == 0, counts  # none left


def test_the_fixture_is_keras_3_and_small():
    size = os.path.getsize(keras_reference_cases.FIXTURE)
    assert size < 4 * 2**20, f"the fixture grew to {size / 2**20:.1f} MiB"
    with open(keras_reference_cases.FIXTURE) as handle:
        recorded = json.load(handle)
    assert recorded["keras_version"].startswith("3.") and recorded["backend"] == "tensorflow"
    labels = [case[0] for case in keras_reference_cases.cases()]
    assert set(labels) == set(recorded["answers"]), "rerun make_keras_reference.py: the cases changed"
    assert len(keras_reference_cases.signatures()) >= 330  # every keras.ops and keras.ops.image function


def _case(op, args, argument=None, value=None):
    return (f"{op}({argument}=x)" if argument else f"{op}()", op, list(args), {}, argument, value)


def test_the_replay_catches_wrong_answers_raw_errors_and_refusals():
    x = numpy.array([1.0, -2.0], "float32")
    parameters = [("x", "POSITIONAL_OR_KEYWORD", None)]
    same = {"out": [{"dtype": "float32", "shape": [2], "values": [1.0, 2.0]}]}
    other_value = {"out": [{"dtype": "float32", "shape": [2], "values": [1.0, 3.0]}]}
    other_dtype = {"out": [{"dtype": "float64", "shape": [2], "values": [1.0, 2.0]}]}
    refuses = {"raises": "InvalidArgumentError", "message": "no"}
    assert keras_reference.classify(_case("abs", [x]), same, parameters)[0] == "ok"
    assert keras_reference.classify(_case("abs", [x]), other_value, parameters)[0] == "wrong"
    assert keras_reference.classify(_case("abs", [x]), other_dtype, parameters)[0] == "wrong"
    assert keras_reference.classify(_case("abs", [x]), refuses, parameters)[0] == "wrong"  # a silent answer
    assert keras_reference.classify(_case("abs", ["a"], "x", "a"), refuses, parameters)[0] == "clean"  # both refuse
    assert keras_reference.classify(_case("abs", ["a"], "x", "a"), same, parameters)[0] == "refused"
    axis = [("x", "POSITIONAL_OR_KEYWORD", None), ("axis", "POSITIONAL_OR_KEYWORD", "None")]
    strict = ("sum(axis=True)", "sum", [x], {"axis": True}, "axis", True)  # Keras reads True as axis 1
    assert keras_reference.classify(strict, same, axis)[0] == "strict"


def test_the_replay_finds_a_raw_error_and_its_site(monkeypatch):
    import minikeras as mk

    def leaky(x):
        return numpy.empty(0)[x.shape[0]]  # NumPy's IndexError, not the library's

    monkeypatch.setattr(mk.ops, "leaky", leaky, raising=False)
    record = {"raises": "ValueError", "message": "Keras refuses"}
    outcome, detail, site = keras_reference.classify(
        _case("leaky", [numpy.ones(2, "float32")]), record, [("x", "POSITIONAL_OR_KEYWORD", None)])
    assert outcome == "leak" and detail.startswith("IndexError") and site.endswith("test_fuzz_keras_reference.py:"
                                                                                   f"{leaky.__code__.co_firstlineno + 1}")
