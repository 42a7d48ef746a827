"""What ``import minikeras`` costs: modules loaded, by package, and wall time.

Each measurement is a fresh interpreter. Wall time is the best of ``--rounds``
runs of ``python -c "import minikeras"`` (with ``python -c pass`` for the
interpreter's own start), and so is its CPU time (user + system of the child,
which a busy machine disturbs far less than wall time); ``-X importtime`` gives
minikeras's cumulative import time. ``--tree DIR`` measures another
checkout (DIR holds its ``minikeras/``), so two trees can be measured in
alternation, round by round, on a busy machine.

Usage: python benchmarks/bench_import.py [--rounds 5] [--tree DIR ...]
"""
import argparse
import collections
import json
import os
import resource
import subprocess
import sys
import time

_COUNT = ("import json, sys, minikeras; print(json.dumps(sorted(m for m in sys.modules "
          "if m.split('.')[0] == 'minikeras')))")


def _run(tree, *arguments):
    environment = dict(os.environ, PYTHONPATH=tree)
    return subprocess.run([sys.executable, *arguments], capture_output=True, text=True, check=True, cwd=tree,
                          env=environment)


def _wall_and_cpu(tree, code):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    _run(tree, "-c", code)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _importtime_us(tree):
    for line in _run(tree, "-X", "importtime", "-c", "import minikeras").stderr.splitlines():
        if line.rstrip().endswith("| minikeras"):
            return int(line.split("|")[1])
    raise RuntimeError("no minikeras line in -X importtime's output")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--tree", action="append", help="a checkout holding minikeras/ (default: this one)")
    args = parser.parse_args()
    trees = [os.path.abspath(tree) for tree in (args.tree or [os.path.dirname(os.path.dirname(
        os.path.abspath(__file__)))])]
    best = {tree: collections.defaultdict(lambda: float("inf")) for tree in trees}
    for _ in range(args.rounds):  # the trees alternate within each round
        for tree in trees:
            for name, code in (("pass", "pass"), ("import", "import minikeras")):
                wall, cpu = _wall_and_cpu(tree, code)
                best[tree][name] = min(best[tree][name], wall)
                best[tree][name + " cpu"] = min(best[tree][name + " cpu"], cpu)
            best[tree]["importtime"] = min(best[tree]["importtime"], _importtime_us(tree) / 1e6)
    for tree in trees:
        modules = json.loads(_run(tree, "-c", _COUNT).stdout)
        packages = collections.Counter(m.split(".")[1] if "." in m else "(top)" for m in modules)
        print(f"{tree}: {len(modules)} minikeras modules")
        print("  by package: " + ", ".join(f"{name} {count}" for name, count in packages.most_common()))
        print(f"  best of {args.rounds}, wall (CPU): python -c pass {best[tree]['pass']:.3f} s "
              f"({best[tree]['pass cpu']:.3f} s), python -c 'import minikeras' {best[tree]['import']:.3f} s "
              f"({best[tree]['import cpu']:.3f} s); -X importtime (minikeras, cumulative) "
              f"{best[tree]['importtime']:.3f} s")


if __name__ == "__main__":
    main()
