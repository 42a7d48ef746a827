"""Argument fuzzing (issue 27): every public op's non-array arguments and the
keywords of compile/fit/evaluate/predict, exhaustively (about 11,000 op
calls over 370+ ops, a few seconds): no raw error, no silent answer. See argument_cases.py and
model_argument_cases.py for the values and the oracle; ``run_fuzz.py``
prints the same counts.
"""
import collections
import os
import sys

import numpy
import pytest

import minikeras as mk

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import argument_cases  # noqa: E402
import model_argument_cases  # noqa: E402


def _report(results):
    counts = collections.Counter(outcome for outcome, _ in results)
    bad = [label for outcome, label in results if outcome in ("leak", "wrong")]
    return counts, bad


def test_every_public_op_argument_gives_a_result_or_a_clean_error():
    results = []
    for name, function, args, kwargs, argument, value, refuse in argument_cases.cases():
        outcome, detail, site = argument_cases.classify_call(name, function, args, kwargs, refuse)
        results.append((outcome, f"{outcome} ops.{name}({argument}={value!r}) at {site}: {detail}"))
    counts, bad = _report(results)
    assert not bad, "\n".join(bad[:30]) + "\n(an op whose base call fails needs an entry in BASE_CALLS)"
    assert counts["ok"] > 500 and counts["clean"] > 2000, counts
    assert len(argument_cases.public_ops()) >= 370  # discovered, not listed


def test_the_not_yet_fuzzed_list_only_names_public_ops():
    everything = argument_cases.public_ops(include_not_yet_fuzzed=True)
    assert argument_cases.not_yet_fuzzed() <= set(everything), "remove ops that no longer exist from the list"


def test_every_training_keyword_gives_a_result_or_a_clean_error():
    results = []
    for method, keyword, value, refuse in model_argument_cases.cases():
        outcome, detail, site = model_argument_cases.classify_call(method, keyword, value, refuse)
        results.append((outcome, f"{outcome} {method}({keyword}={value!r}) at {site}: {detail}"))
    counts, bad = _report(results)
    assert not bad, "\n".join(bad[:30])
    assert counts["ok"] > 100 and counts["clean"] > 400, counts


def test_the_argument_oracle_catches_raw_errors_and_silent_answers():
    def lenient_sum(x, axis=None):  # takes True as axis 1, as ops.sum once did
        return mk.tensor(numpy.sum(x, axis=int(axis)))

    def leaking(x, axis=None):
        raise IndexError("tuple index out of range")

    x = numpy.ones((2, 3), "float32")
    assert argument_cases.classify_call("lenient_sum", lenient_sum, [x], {"axis": True}, True)[0] == "wrong"
    outcome, _, site = argument_cases.classify_call("leaking", leaking, [x], {"axis": 0}, False)
    assert outcome == "leak" and site.endswith(".py:" + str(leaking.__code__.co_firstlineno + 1))
    assert argument_cases.must_refuse("axis", True, None, 2) and argument_cases.must_refuse("axis", 1.5, None, 2)
    assert not argument_cases.must_refuse("axis", -2, None, 2) and argument_cases.must_refuse("axis", 2, None, 2)


# The audit's examples, each now the library's own error.
def test_the_audit_examples_are_refused_clearly():
    x = mk.tensor(numpy.ones((2, 3), "float32"))
    with pytest.raises(TypeError, match="sum: axis must be an int or a tuple of ints, received float 1.5"):
        mk.ops.sum(x, 1.5)
    with pytest.raises(TypeError, match="sum: axis must be an int or a tuple of ints, received bool True"):
        mk.ops.sum(x, True)
    with pytest.raises(TypeError, match="mean: keepdims must be a bool, received str 'no'"):
        mk.ops.mean(x, keepdims="no")
    with pytest.raises(ValueError, match="one_hot: indices must be .* received a ragged list"):
        mk.ops.one_hot([[1, 2], [3]], 4)
    with pytest.raises(mk.errors.ResourceExhaustedError, match="Out of memory on /device:[CG]PU:0.*OneHot could not "
                                                               "allocate"):
        mk.ops.one_hot(numpy.array([1, 2]), 10**12)
    with pytest.raises(TypeError, match="zeros_like: dtype must be a dtype name"):
        mk.ops.zeros_like(x, dtype=0)
    with pytest.raises(ValueError, match="lstm_sequence: activation must be one of"):
        mk.ops.lstm_sequence(numpy.ones((2, 3, 4), "float32"), numpy.ones((4, 20), "float32"),
                             numpy.ones((5, 20), "float32"), None, numpy.ones((2, 5), "float32"), None,
                             activation="tanhh")


def test_fit_refuses_what_keras_does_not_accept():
    model = mk.Sequential([mk.layers.Dense(2, activation="softmax", input_shape=(4,))])
    model.compile(optimizer="sgd", loss="categorical_crossentropy", metrics=["accuracy"])
    x, y = numpy.ones((8, 4), "float32"), numpy.eye(2, dtype="float32")[numpy.arange(8) % 2]
    with pytest.raises(TypeError, match="fit: shuffle must be a bool or 'batch', received 'a'"):
        model.fit(x, y, shuffle="a", verbose=0)
    with pytest.raises(ValueError, match=r"fit: class_weight\[0\] must be a finite number >= 0, received -1.0"):
        model.fit(x, y, class_weight={0: -1.0, 1: 1.0}, verbose=0)
    with pytest.raises(ValueError, match="fit: initial_epoch must be a non-negative int, received -7"):
        model.fit(x, y, initial_epoch=-7, verbose=0)
    with pytest.raises(ValueError, match="fit: validation_freq must be a positive int, received False"):
        model.fit(x, y, validation_data=(x, y), validation_freq=False, verbose=0)
    with pytest.raises(TypeError, match="compile: metrics must be a list"):
        model.compile(optimizer="sgd", loss="mse", metrics="accuracy")
    model.fit(x, y, shuffle="batch", class_weight={0: 1.0, 1: 2.0}, verbose=0)  # what Keras accepts still works


def test_a_negative_batch_shape_in_a_model_file_is_the_librarys_error(tmp_path):
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "security"))
    import craft_files

    path = str(tmp_path / "m.h5")
    craft_files.save_plain_model(path)

    def negative(config):
        for spec in config["config"]["layers"]:
            for key in ("batch_shape", "batch_input_shape"):
                if key in spec["config"]:
                    spec["config"][key] = [None, -4]
        return config

    craft_files.rewrite_attribute(path, "model_config", negative)
    with pytest.raises(ValueError, match=r"InputLayer.*batch shape must be a list of sizes \(ints >= 0, or None\), "
                                         r"received \(None, -4\)"):
        mk.models.load_model(path)
