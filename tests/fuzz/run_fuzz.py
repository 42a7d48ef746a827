"""Standalone fuzz run, the audit's five counts: calls, correct results, clean
errors, raw errors (with the number of distinct places raising them) and
silent answers (a result where the input must be refused, or a wrong one).

Three parts: every array-input target on every input kind over a few shapes
and ``--seeds`` seeds (fuzz_cases.py), every public op's non-array arguments
(argument_cases.py), the keywords of compile/fit/evaluate/predict
(model_argument_cases.py) and the Keras-referenced argument fuzz of every
keras.ops function against Keras 3's recorded answers (keras_reference.py,
where a result that differs from Keras's counts as silent); the last three
are exhaustive, the same every run.

Usage: python tests/fuzz/run_fuzz.py [--seeds N] [--json PATH] [-v]
(``-v`` prints each raw error's place once, and each silent answer.)
"""
import argparse
import collections
import json
import os
import sys

import numpy

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import minikeras as mk  # noqa: E402
import argument_cases  # noqa: E402
import keras_reference  # noqa: E402
import model_argument_cases  # noqa: E402
from fuzz_cases import KINDS, TARGETS, classify, make_input  # noqa: E402

SHAPES = ((), (3,), (2, 3), (2, 3, 4))


class Tally:
    """The five counts of one part, and where raw errors come from."""

    def __init__(self, verbose):
        self.counts, self.sites, self.verbose = collections.Counter(), set(), verbose

    def add(self, label, outcome, detail, site):
        self.counts["calls"] += 1
        self.counts[outcome] += 1
        if outcome == "leak":
            if self.verbose and site not in self.sites:
                print(f"raw    {site}  {label}: {detail}")
            self.sites.add(site)
        elif outcome == "wrong" and self.verbose:
            print(f"silent {label}: {detail}")

    def summary(self):
        return {"calls": self.counts["calls"], "correct": self.counts["ok"], "clean_errors": self.counts["clean"],
                "raw_errors": self.counts["leak"], "raw_error_sites": len(self.sites),
                "silent": self.counts["wrong"]}


def array_inputs(seeds, tally):
    for seed in range(seeds):
        rng = numpy.random.default_rng(seed)
        mk.random.seed(seed)
        for target in TARGETS:
            for kind in KINDS:
                for shape in SHAPES:
                    outcome, detail, site = classify(target, kind, make_input(kind, shape, rng), with_site=True)
                    tally.add(f"{target} {kind} {shape}", outcome, detail, site)


def op_arguments(tally):
    for name, function, args, kwargs, argument, value, refuse in argument_cases.cases():
        outcome, detail, site = argument_cases.classify_call(name, function, args, kwargs, refuse)
        tally.add(f"ops.{name}({argument}={value!r})", outcome, detail, site)


def model_arguments(tally):
    for method, keyword, value, refuse in model_argument_cases.cases():
        outcome, detail, site = model_argument_cases.classify_call(method, keyword, value, refuse)
        tally.add(f"{method}({keyword}={value!r})", outcome, detail, site)


def keras_referenced(tally):
    # A refusal of input Keras takes counts with the silent answers: both are answers Keras does not give.
    outcomes = {"ok": "ok", "clean": "clean", "strict": "clean", "leak": "leak", "wrong": "wrong",
                "refused": "wrong", "missing": "wrong", "pending": "wrong", "pending_refusal": "clean",
                "fixed": "wrong"}
    for label, outcome, detail, site in keras_reference.run():
        tally.add(label, outcomes[outcome], detail, site)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--json", default=None)
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args()
    parts = {"array inputs": Tally(args.verbose), "op arguments": Tally(args.verbose),
             "model keywords": Tally(args.verbose), "keras reference": Tally(args.verbose)}
    array_inputs(args.seeds, parts["array inputs"])
    op_arguments(parts["op arguments"])
    model_arguments(parts["model keywords"])
    keras_referenced(parts["keras reference"])
    failures = argument_cases.base_failures()
    summaries = {name: tally.summary() for name, tally in parts.items()}
    total = collections.Counter()
    for summary in summaries.values():
        total.update(summary)
    summaries["total"] = dict(total)
    print(f"{'part':16s} {'calls':>6s} {'correct':>8s} {'clean errors':>13s} {'raw errors (sites)':>19s} "
          f"{'silent':>7s}")
    for name, summary in summaries.items():
        raw = f"{summary['raw_errors']} ({summary['raw_error_sites']})"
        print(f"{name:16s} {summary['calls']:6d} {summary['correct']:8d} {summary['clean_errors']:13d} {raw:>19s} "
              f"{summary['silent']:7d}")
    if failures:
        print(f"ops whose base call fails (add them to argument_cases.BASE_CALLS): {sorted(failures)}")
    if args.json:
        with open(args.json, "w") as handle:
            json.dump({"parts": summaries, "base_call_failures": failures}, handle, indent=2)
    return summaries


if __name__ == "__main__":
    main()
