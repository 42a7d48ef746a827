"""Standalone fuzz run: every target on every input kind over a few shapes.

Prints calls / clean errors / raw leaks / silent-wrong counts (and, with
``-v``, each leak and wrong result) and writes the counts as JSON.

Usage: python tests/fuzz/run_fuzz.py [--seeds N] [--json PATH] [-v]
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
from fuzz_cases import KINDS, TARGETS, classify, make_input  # noqa: E402

SHAPES = ((), (3,), (2, 3), (2, 3, 4))


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--json", default=None)
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args()
    counts = collections.Counter()
    places = collections.defaultdict(set)
    for seed in range(args.seeds):
        rng = numpy.random.default_rng(seed)
        mk.random.seed(seed)
        for target in TARGETS:
            for kind in KINDS:
                for shape in SHAPES:
                    value = make_input(kind, shape, rng)
                    outcome, detail = classify(target, kind, value)
                    counts["calls"] += 1
                    counts[outcome] += 1
                    if outcome in ("leak", "wrong"):
                        places[outcome].add((target, kind, detail.split(":")[0]))
                        if args.verbose and seed == 0:
                            print(f"{outcome:5s} {target:32s} {kind:9s} {shape}: {detail}")
    summary = {"calls": counts["calls"], "ok": counts["ok"], "clean_errors": counts["clean"],
               "raw_leaks": counts["leak"], "silent_wrong": counts["wrong"],
               "leak_places": len(places["leak"]), "wrong_places": len(places["wrong"])}
    print("calls  ok  clean_errors  raw_leaks  silent_wrong  (distinct target/kind: leaks, wrong)")
    print(f"{summary['calls']:5d} {summary['ok']:4d} {summary['clean_errors']:12d} {summary['raw_leaks']:10d} "
          f"{summary['silent_wrong']:13d}  ({summary['leak_places']}, {summary['wrong_places']})")
    if args.json:
        with open(args.json, "w") as handle:
            json.dump(summary, handle, indent=2)
    return summary


if __name__ == "__main__":
    main()
