"""Re-measure the figures of issue 12 (safe on untrusted files).

1. Crafted files (tests/security/craft_files.py): each loaded in a fresh
   process (tests/security/rss_probe.py); outcome and peak-RSS growth.
2. kill -9 mid-write: a writer process saves a model (8 MB of weights) in a
   loop to one target and is killed at a random moment; then the target
   must load with the expected weights, and the temporary files of the
   killed writers must be gone after the next save.
3. Truncations and byte flips of a saved model
   (tests/security/corruption_trials.py): library error / raw error /
   silent load with identical contents / silent load with altered contents.

    python benchmarks/security_issue12.py [--kills 50] [--truncations 60] [--flips 240]

Prints tables and writes benchmarks/results/security_issue12.json.
"""
import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SECURITY = os.path.join(ROOT, "tests", "security")
sys.path[:0] = [ROOT, SECURITY, os.path.dirname(os.path.abspath(__file__))]

import numpy  # noqa: E402

import craft_files  # noqa: E402
import minikeras as mk  # noqa: E402
from _report import report  # noqa: E402

_WRITER = """
import sys
sys.path.insert(0, {root!r})
sys.path.insert(0, {security!r})
import security_writer
security_writer.main({target!r})
"""


def crafted_rows(folder):
    rows = []
    groups = [("model", craft_files.all_crafted(folder)), ("idx", None), ("cifar", None)]
    datasets = craft_files.all_crafted_datasets(folder)
    groups[1] = ("idx", {k: v for k, v in datasets.items() if k.startswith("idx")})
    groups[2] = ("cifar", {k: v for k, v in datasets.items() if k.startswith("cifar")})
    for kind, files in groups:
        result = subprocess.run([sys.executable, os.path.join(SECURITY, "rss_probe.py"), kind, *files.values()],
                                capture_output=True, text=True, timeout=600)
        reports = {r["path"]: r for r in map(json.loads, result.stdout.splitlines())}
        for name, path in files.items():
            r = reports.get(path, {"outcome": f"probe crashed: {result.stderr[-200:]}", "peak_rss_growth_bytes": None})
            rows.append({"file": name, "kind": kind, "bytes": os.path.getsize(path), "outcome": r["outcome"],
                         "refused": r["outcome"] != "loaded",
                         "peak_rss_growth_mb": None if r["peak_rss_growth_bytes"] is None
                         else round(r["peak_rss_growth_bytes"] / 2**20, 1)})
    return rows


def kill_trials(count, folder, seed=0):
    rng = random.Random(seed)
    target = os.path.join(folder, "model.h5")
    reference = _writer_model()
    reference.save(target)
    expected = reference.get_weights()
    intact = mid_write = most_temporaries = 0
    for _ in range(count):
        script = _WRITER.format(root=ROOT, security=SECURITY, target=target)
        writer = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
        writer.stdout.readline()  # "saving": the first save has begun
        time.sleep(rng.uniform(0.0, 0.4))
        writer.kill()  # SIGKILL: no cleanup runs
        writer.wait()
        temporaries = _temporaries(folder)
        mid_write += bool(temporaries)
        most_temporaries = max(most_temporaries, len(temporaries))
        try:
            loaded = mk.models.load_model(target, compile=False)
            intact += all(numpy.array_equal(a, b) for a, b in zip(loaded.get_weights(), expected))
        except Exception:  # noqa: BLE001  (a damaged target is what we count)
            pass
    left_before = len(_temporaries(folder))
    reference.save(target)  # the next save to the target cleans the dead writers' temporaries
    return {"trials": count, "intact": intact, "killed_mid_write": mid_write,
            "most_temporaries_at_once": most_temporaries, "temporaries_before_next_save": left_before,
            "temporaries_after_next_save": len(_temporaries(folder))}


def _temporaries(folder):
    return [name for name in os.listdir(folder) if ".minikeras-tmp-" in name or name.endswith(".tmp")]


def _writer_model():
    mk.random.seed(0)
    return mk.Sequential([mk.layers.Dense(2048, input_shape=(1024,), name="big"), mk.layers.Dense(4, name="out")])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kills", type=int, default=50)
    parser.add_argument("--truncations", type=int, default=60)
    parser.add_argument("--flips", type=int, default=240)
    parser.add_argument("--seed", type=int, default=0)
    arguments = parser.parse_args()
    import corruption_trials

    with tempfile.TemporaryDirectory() as folder:
        rows = crafted_rows(folder)
    with tempfile.TemporaryDirectory() as folder:
        kills = kill_trials(arguments.kills, folder, arguments.seed)
    with tempfile.TemporaryDirectory() as folder:
        corruption = corruption_trials.run(arguments.truncations, arguments.flips, arguments.seed, folder)
    summary = {
        "crafted_files": len(rows), "crafted_refused": sum(r["refused"] for r in rows),
        "crafted_max_peak_rss_growth_mb": max(r["peak_rss_growth_mb"] or 0 for r in rows),
        "kill_trials": kills, "corruption": corruption,
    }
    report("security_issue12", rows, ["file", "kind", "bytes", "outcome", "peak_rss_growth_mb"], extra=summary)
    print(json.dumps({key: value for key, value in summary.items()}, indent=2, default=str))


if __name__ == "__main__":
    main()
