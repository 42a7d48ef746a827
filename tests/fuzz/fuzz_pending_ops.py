"""Argument fuzz of the ops not yet covered by the test (those listed in
not_yet_argument_fuzzed.json, or the ones named on the command line), each
call under a time limit, grouped for fixing: raw errors by the place that
raised them (``file:line``), silent answers by op, and ops whose base call
fails (they need an entry in ``argument_cases.BASE_CALLS``).

An op leaves the list when this prints nothing for it.

Usage: python tests/fuzz/fuzz_pending_ops.py [--timeout S] [--all] [--prune] [OP ...]
(``--all`` fuzzes every public op, the covered ones included; ``--prune``
removes the clean ones from not_yet_argument_fuzzed.json.)
"""
import argparse
import collections
import json
import os
import signal
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import argument_cases  # noqa: E402


class CallTimeout(BaseException):
    """A fuzzed call ran past its limit (a BaseException so no op's ``except Exception`` swallows it)."""


def _alarm(signum, frame):
    raise CallTimeout()


def run(ops, timeout):
    """``(counts, leaks by site, silent by op, timeouts)`` of fuzzing ``ops``."""
    counts, leaks, silent, timeouts = collections.Counter(), collections.defaultdict(list), \
        collections.defaultdict(list), []
    signal.signal(signal.SIGALRM, _alarm)
    for name, function, args, kwargs, argument, value, refuse in argument_cases.cases(ops):
        label = f"{name}({argument}={value!r})"
        signal.setitimer(signal.ITIMER_REAL, timeout)
        try:
            outcome, detail, site = argument_cases.classify_call(name, function, args, kwargs, refuse)
        except CallTimeout:
            outcome, detail, site = "timeout", "", None
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
        counts[outcome] += 1
        if outcome == "leak":
            leaks[site].append(f"{label}: {detail}")
        elif outcome == "wrong":
            silent[name].append(label)
        elif outcome == "timeout":
            timeouts.append(label)
    return counts, leaks, silent, timeouts


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("ops", nargs="*")
    parser.add_argument("--timeout", type=float, default=5.0, help="seconds per call")
    parser.add_argument("--all", action="store_true")
    parser.add_argument("--examples", type=int, default=2, help="calls shown per site")
    parser.add_argument("--prune", action="store_true", help="remove the clean ops from the not-yet list")
    args = parser.parse_args()
    everything = argument_cases.public_ops(include_not_yet_fuzzed=True)
    names = args.ops or (sorted(everything) if args.all else sorted(argument_cases.not_yet_fuzzed()))
    ops = {name: everything[name] for name in names}
    counts, leaks, silent, timeouts = run(ops, args.timeout)
    for site, labels in sorted(leaks.items(), key=lambda item: -len(item[1])):
        print(f"leak   {site}  ({len(labels)} calls)")
        for label in labels[:args.examples]:
            print(f"         {label}")
    for name, labels in sorted(silent.items(), key=lambda item: -len(item[1])):
        print(f"silent {name} ({len(labels)}): {', '.join(labels[:6])}")
    for label in timeouts:
        print(f"timeout {label}")
    failures = argument_cases.base_failures(ops)
    for name, error in sorted(failures.items()):
        print(f"base call fails: {name}: {error[:160]}")
    bad = {label.split("(")[0] for labels in leaks.values() for label in labels} | set(silent) | \
        {label.split("(")[0] for label in timeouts} | set(failures)
    print(f"\n{len(ops)} ops, {sum(counts.values())} calls: {counts['ok']} ok, {counts['clean']} clean errors, "
          f"{counts['leak']} raw errors at {len(leaks)} sites, {counts['wrong']} silent, {counts['timeout']} "
          f"timed out")
    print(f"clean ops ({len(ops) - len(bad)}): {' '.join(sorted(set(ops) - bad))}")
    if args.prune:
        prune(set(ops) - bad)
    return bad


def prune(clean):
    """Remove ``clean`` from not_yet_argument_fuzzed.json (the list only shrinks)."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "not_yet_argument_fuzzed.json")
    with open(path) as handle:
        listing = json.load(handle)
    listing["ops"] = [name for name in listing["ops"] if name not in clean]
    with open(path, "w") as handle:
        json.dump(listing, handle, indent=1)
        handle.write("\n")
    print(f"{len(listing['ops'])} ops left in {os.path.basename(path)}")


if __name__ == "__main__":
    main()
