"""Property test: the public ops, layers, losses, metrics and optimizers on
random shapes, dtypes (bool, int, float16/32/64, complex, object, str),
empty, NaN, None and Python-number inputs.

Every call must give the right result (equal to NumPy's where the
catalogue has a NumPy reference, and no NaN from NaN-free input) or the
library's own ValueError/TypeError naming the entry: never another
exception type, never a raw NumPy error, never a silently wrong value.
See ``fuzz_cases.classify`` for the exact oracle.

Run time is bounded by a Hypothesis profile: ``ci`` (default, derandomized
so that the suite is deterministic, about 20 s on two cores) or
``nightly`` (``HYPOTHESIS_PROFILE=nightly``: 20 times more examples, fresh
randomness each run).
"""
import os

import numpy
import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import minikeras as mk  # noqa: E402
from tests.fuzz.fuzz_cases import KINDS, TARGETS, classify, make_input  # noqa: E402

settings.register_profile("ci", max_examples=500, deadline=None, derandomize=True, database=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("nightly", max_examples=10000, deadline=None, database=None,
                          suppress_health_check=[HealthCheck.too_slow])
PROFILE = settings.get_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

shapes = st.lists(st.integers(min_value=0, max_value=4), min_size=0, max_size=4).map(tuple)
FAMILIES = ("ops", "layers", "losses", "metrics", "optimizers")


def _targets(family):
    return sorted(name for name in TARGETS if name.startswith(family + "."))


@pytest.mark.parametrize("family", FAMILIES)
def test_public_entries_give_right_results_or_clean_errors(family):
    @PROFILE
    @given(target=st.sampled_from(_targets(family)), kind=st.sampled_from(KINDS), shape=shapes,
           seed=st.integers(min_value=0, max_value=2**16))
    def check(target, kind, shape, seed):
        mk.random.seed(seed)
        value = make_input(kind, shape, numpy.random.default_rng(seed))
        outcome, detail = classify(target, kind, value)
        assert outcome in ("ok", "clean"), f"{target} on {kind} {shape}: {outcome}: {detail}"

    check()


def test_the_oracle_catches_leaks_and_wrong_results():
    """The property above can fail: a raw error, an unnamed error and a
    wrong value are each classified as such."""
    from tests.fuzz import fuzz_cases

    def leaking(x):
        raise IndexError("tuple index out of range")

    def unnamed(x):
        raise ValueError("operands could not be broadcast together")

    def wrong(x):
        return mk.tensor(numpy.asarray(x, dtype="float32") + 1)

    saved = dict(fuzz_cases.TARGETS)
    try:
        fuzz_cases.TARGETS["ops.leaking"] = (leaking, None, "leaking")
        fuzz_cases.TARGETS["ops.unnamed"] = (unnamed, None, "unnamed")
        fuzz_cases.TARGETS["ops.wrong"] = (wrong, numpy.abs, "wrong")
        value = numpy.ones(3, "float32")
        assert classify("ops.leaking", "float32", value)[0] == "leak"
        assert classify("ops.unnamed", "float32", value)[0] == "leak"
        assert classify("ops.wrong", "float32", value)[0] == "wrong"
        assert classify("ops.abs", "object", numpy.array([None], dtype=object))[0] == "clean"
    finally:
        fuzz_cases.TARGETS.clear()
        fuzz_cases.TARGETS.update(saved)
